// Statistics of repeats: the warm-up rule, summaries, Welch's t-test,
// paired ratios (see the package documentation).

package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Alpha is the significance level of the noise test: a difference of two
// means is significant when Welch's two-sided p-value is below it.
const Alpha = 0.05

// The warm-up rule: with at least WarmupMinRepeats repeats, the leading
// repeats (the first, and each next one while they go on) that are more
// than WarmupFactor times the median of the repeats after the first are
// dropped, as long as the repeats kept hold at least half the steps. Repeats of several steps (a
// generate of many tokens) are compared per step, and the median weighs
// each repeat by its steps, so that a short warm-up generate and a slow
// one of new shapes are found alike and a repeat of few steps counts for
// few. A run whose workload does not warm up shows such first repeats,
// one-time costs such as kernel selection; kept, they would drive the mean
// and swamp the spread, so that no steady-state change could ever be
// significant (the recording that showed it: docs/measurements.md, "Why
// diff's statistics").
const (
	WarmupFactor     = 1.5
	WarmupMinRepeats = 3
)

// WarmupRule is the rule in words, as reports print it.
func WarmupRule() string {
	return fmt.Sprintf("with %d or more repeats, the first repeats over %g× the median of the others (per step, for repeats of several) are dropped as warm-up",
		WarmupMinRepeats, WarmupFactor)
}

// WarmupWhy is why a dropped repeat was dropped, as reports print it after
// saying which repeat it was.
func WarmupWhy() string {
	return fmt.Sprintf("over %g× the median of the other repeats (warm-up)", WarmupFactor)
}

// Sample is one quantity's repeats in ms, in the order measured.
type Sample struct {
	Repeats []float64
	// Steps, when given (one a repeat, each at least 1), is how many steps
	// each repeat holds: the rule compares repeats per step. Nil: one each.
	Steps []float64
}

// steps is repeat i's step count.
func (s Sample) steps(i int) float64 {
	if i < len(s.Steps) && s.Steps[i] >= 1 {
		return s.Steps[i]
	}
	return 1
}

// Warmup reports how many leading repeats the warm-up rule drops, and the
// median (per step) of the repeats after the first they were compared with.
func (s Sample) Warmup() (dropped int, medianOthers float64) {
	if len(s.Repeats) < WarmupMinRepeats {
		return 0, 0
	}
	per := make([]float64, len(s.Repeats))
	for i, v := range s.Repeats {
		per[i] = v / s.steps(i)
	}
	m := s.weightedMedian(per, 1)
	var total float64
	for i := range per {
		total += s.steps(i)
	}
	left := total
	for dropped < len(per)-1 && per[dropped] > WarmupFactor*m && 2*(left-s.steps(dropped)) >= total {
		left -= s.steps(dropped)
		dropped++
	}
	return dropped, m
}

// weightedMedian is the median of per[from:], each value counted as many
// times as its repeat has steps (the mean of the two middle ones where the
// steps split evenly, as median gives for one step each).
func (s Sample) weightedMedian(per []float64, from int) float64 {
	if s.Steps == nil {
		return median(per[from:])
	}
	idx := make([]int, 0, len(per)-from)
	var total float64
	for i := from; i < len(per); i++ {
		idx = append(idx, i)
		total += s.steps(i)
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpFloat(per[a], per[b]) })
	var acc float64
	for j, i := range idx {
		acc += s.steps(i)
		switch {
		case acc > total/2:
			return per[i]
		case acc == total/2 && j+1 < len(idx):
			return (per[i] + per[idx[j+1]]) / 2 // as median does for an even count
		case acc == total/2:
			return per[i]
		}
	}
	return per[idx[len(idx)-1]]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Kept is the repeats the statistics use: all of them, or all but the
// dropped warm-up.
func (s Sample) Kept() []float64 {
	n, _ := s.Warmup()
	return s.Repeats[n:]
}

// PerStep is the kept repeats' time per step (their sum over their steps)
// and their steps; 0, 0 with no repeat.
func (s Sample) PerStep() (ms, steps float64) {
	n, _ := s.Warmup()
	var sum float64
	for i := n; i < len(s.Repeats); i++ {
		sum += s.Repeats[i]
		steps += s.steps(i)
	}
	if steps == 0 {
		return 0, 0
	}
	return RoundMS(sum / steps), steps
}

// Summary is what a Sample comes to: the count, mean and sample standard
// deviation of its kept repeats, and the warm-up dropped
// (facts.RepeatSummary).
type Summary = facts.RepeatSummary

// Summarize summarizes repeats (Sample{ms}.Summary()).
func Summarize(ms []float64) Summary { return Sample{Repeats: ms}.Summary() }

// Summary applies the warm-up rule and returns the mean and sample standard
// deviation of the kept repeats, rounded to a picosecond (1e-9 ms) so that
// they print alike on every platform.
func (s Sample) Summary() Summary {
	var out Summary
	if n, _ := s.Warmup(); n > 0 {
		var w float64
		for _, v := range s.Repeats[:n] {
			w += v
		}
		out.WarmupMS = &w
		if n > 1 {
			out.WarmupN = n
		}
	}
	kept := s.Kept()
	out.N = len(kept)
	if out.N == 0 {
		return out
	}
	var sum float64
	for _, v := range kept {
		sum += v
	}
	mean := sum / float64(out.N)
	var sd float64
	if out.N > 1 {
		var ss float64
		for _, v := range kept {
			d := v - mean
			ss += d * d
		}
		scale := 1.0
		if math.IsInf(ss, 0) {
			// Repeats so large that their squares are not finite: the
			// deviations scaled by the largest (only then, so that every
			// other sd is computed as before, to the bit).
			scale, ss = 0, 0
			for _, v := range kept {
				scale = max(scale, math.Abs(v-mean))
			}
			for _, v := range kept {
				d := (v - mean) / scale
				ss += d * d
			}
		}
		sd = scale * math.Sqrt(ss/float64(out.N-1))
	}
	out.MeanMS, out.SDMS = RoundMS(mean), RoundMS(sd)
	return out
}

// Dropped says which repeat the warm-up rule dropped of s and why, for a
// table's note ("" when none was): "first of 3 repeats, 118.675 ms,
// dropped: over 1.5× the median of the other repeats (warm-up)". format
// prints a time in ms as the table prints its numbers.
func Dropped(s Summary, format func(ms float64) string) string {
	if s.WarmupMS == nil {
		return ""
	}
	if s.WarmupN > 1 {
		return fmt.Sprintf("first %d of %d repeats, %s ms in all, dropped: %s", s.WarmupN, s.N+s.WarmupN, format(*s.WarmupMS), WarmupWhy())
	}
	return fmt.Sprintf("first of %d repeats, %s ms, dropped: %s", s.N+1, format(*s.WarmupMS), WarmupWhy())
}

// Median is the middle of v (the mean of the two middle values for an even
// count); v is not changed. It is the robust figure of repeats that are
// compared pairwise (a CUPTI run's overhead against the plain run).
func Median(v []float64) float64 { return median(v) }

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
func Welch(a, b Summary) (p float64) {
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
	// The Welch-Satterthwaite degrees of freedom (fractional).
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return StudentTwoSided(t, df)
}

// StudentTwoSided is P(|T| >= |t|) for Student's t with df degrees of
// freedom (df may be fractional), from gonum's distribution.
func StudentTwoSided(t, df float64) float64 {
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}

// RoundMS rounds a derived time to a picosecond (1e-9 ms), so that results
// print alike on every platform.
func RoundMS(v float64) float64 {
	if math.IsInf(v*1e9, 0) {
		return v // past 1.8e299 ms: no picoseconds to round to, and no overflow
	}
	return math.Round(v*1e9) / 1e9
}

// Ratio is a paired ratio's median and quartiles.
type Ratio struct {
	Median, Q1, Q3 float64
	Pairs          int
}

// PairedRatio is the ratio of two conditions measured in alternation
// (on[i] beside off[i], as a profiler's overhead is measured in one
// process): the median over pairs of on[i]/off[i], with the first and third
// quartiles. Within a pair the machine's drift weighs on both sides alike;
// a ratio of the two medians keeps it. false when the lists differ in
// length, are empty, or hold a time that is not finite and > 0.
func PairedRatio(on, off []float64) (Ratio, bool) {
	if len(on) == 0 || len(on) != len(off) {
		return Ratio{}, false
	}
	r := make([]float64, len(on))
	for i := range on {
		if !(on[i] > 0) || !(off[i] > 0) || math.IsInf(on[i], 0) || math.IsInf(off[i], 0) {
			return Ratio{}, false
		}
		r[i] = on[i] / off[i]
	}
	slices.Sort(r)
	return Ratio{Median: median(r), Q1: stat.Quantile(0.25, stat.LinInterp, r, nil),
		Q3: stat.Quantile(0.75, stat.LinInterp, r, nil), Pairs: len(r)}, true
}

// Between is how one figure varies between runs of one program, each its
// own process (facts.Between).
type Between = facts.Between

// NewBetween is the spread of one figure's values, one a run.
func NewBetween(v []float64) Between {
	if len(v) == 0 {
		return Between{}
	}
	return Between{N: len(v), MinMS: RoundMS(slices.Min(v)), MaxMS: RoundMS(slices.Max(v))}
}

// Nearest is the value of the spread b nearest v: v itself inside it, else
// the edge it lies beyond.
func Nearest(b Between, v float64) float64 { return min(max(v, b.MinMS), b.MaxMS) }

// StageTimes is one stage's wall time per repeat, in ms, and its summary after
// the warm-up rule: what a diff and a baseline compare.
type StageTimes struct {
	Name    string    `json:"name"`
	Repeats []float64 `json:"-"` // as measured; nil when read from a baseline
	Summary
}

// NewStage is the stage name with its repeats and their steps (nil: one
// each), summarized.
func NewStage(name string, repeats, steps []float64) StageTimes {
	return StageTimes{Name: name, Repeats: repeats, Summary: Sample{Repeats: repeats, Steps: steps}.Summary()}
}
