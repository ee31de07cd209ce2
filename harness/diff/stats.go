package diff

import (
	"math"
	"slices"
)

// Alpha is the significance level of the noise test: a stage's change is
// significant when Welch's two-sided p-value is below it.
const Alpha = 0.05

// WarmupFactor is the warm-up rule: with at least three repeats, the first is
// dropped when it is more than WarmupFactor times the median of the others.
const WarmupFactor = 1.5

// StageStat summarizes one stage's repeats, in ms.
type StageStat struct {
	N      int     `json:"n"` // repeats used (after a dropped warm-up)
	MeanMS float64 `json:"mean_ms"`
	SDMS   float64 `json:"sd_ms"` // sample standard deviation; 0 when N < 2
	// WarmupMS is the first repeat when the warm-up rule dropped it.
	WarmupMS *float64 `json:"warmup_ms,omitempty"`
}

// Summarize applies the warm-up rule to one stage's repeats and returns their
// mean and sample standard deviation.
func Summarize(ms []float64) StageStat {
	var s StageStat
	if len(ms) >= 3 && ms[0] > WarmupFactor*median(ms[1:]) {
		w := ms[0]
		s.WarmupMS = &w
		ms = ms[1:]
	}
	s.N = len(ms)
	if s.N == 0 {
		return s
	}
	var sum float64
	for _, v := range ms {
		sum += v
	}
	s.MeanMS = sum / float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, v := range ms {
			d := v - s.MeanMS
			ss += d * d
		}
		s.SDMS = math.Sqrt(ss / float64(s.N-1))
	}
	s.MeanMS, s.SDMS = roundMS(s.MeanMS), roundMS(s.SDMS)
	return s
}

func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Welch returns the two-sided p-value of Welch's unequal-variances t-test
// for the difference of two means, from their summaries. Both need N >= 2.
// When both spreads are zero, p is 1 for equal means and 0 otherwise.
func Welch(a, b StageStat) (p float64) {
	va := a.SDMS * a.SDMS / float64(a.N)
	vb := b.SDMS * b.SDMS / float64(b.N)
	d := b.MeanMS - a.MeanMS
	if va+vb == 0 {
		if d == 0 {
			return 1
		}
		return 0
	}
	t := d / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return studentTwoSided(t, df)
}

// studentTwoSided is P(|T| >= |t|) for Student's t with df degrees of
// freedom (df may be fractional): I_{df/(df+t²)}(df/2, 1/2).
func studentTwoSided(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (betacf), evaluated where it
// converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const eps, tiny = 1e-15, 1e-300
	clamp := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, d := 1.0, 1/clamp(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 500; m++ {
		fm, m2 := float64(m), float64(2*m)
		aa := fm * (b - fm) * x / ((a - 1 + m2) * (a + m2))
		d = 1 / clamp(1+aa*d)
		c = clamp(1 + aa/c)
		h *= d * c
		aa = -(a + fm) * (a + b + fm) * x / ((a + m2) * (a + 1 + m2))
		d = 1 / clamp(1+aa*d)
		c = clamp(1 + aa/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// roundMS rounds a derived time to a picosecond (1e-9 ms), so that results
// print alike on every platform.
func roundMS(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// roundFrac rounds a derived fraction or p-value to 1e-6.
func roundFrac(v float64) float64 { return math.Round(v*1e6) / 1e6 }
