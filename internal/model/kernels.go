package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
)

// The kernel table's rows are the public data's (package facts): what
// kernels.json holds.
type (
	KernelTotals = facts.KernelTotals
	KernelStats  = facts.KernelStats
	Spread       = facts.Spread
)

// KernelTable is a kernel table with what it was made from (facts.KernelTable),
// with the cuts an analysis makes of it (Top, Covering) and its Share.
type KernelTable facts.KernelTable

type kernelKey struct {
	name   string
	device DeviceID
}

type kernelAcc struct {
	ns    float64
	calls int64
	durs  durations // per launch; kept only with spread
}

// durations are launch durations in ns: a whole number of ns that a
// uint32 holds (up to 4.29 s) in four bytes, any other in eight.
type durations struct {
	small []uint32
	other []float64
}

func (d *durations) add(ns float64) {
	if ns >= 0 && ns <= math.MaxUint32 && ns == math.Trunc(ns) {
		d.small = append(d.small, uint32(ns))
		return
	}
	d.other = append(d.other, ns)
}

func (d durations) clone() durations {
	return durations{slices.Clone(d.small), slices.Clone(d.other)}
}

// all is every duration, in no order.
func (d durations) all() []float64 {
	out := make([]float64, 0, len(d.small)+len(d.other))
	for _, v := range d.small {
		out = append(out, float64(v))
	}
	return append(out, d.other...)
}

// KernelAggregator sums launches per kernel name and device.
type KernelAggregator struct {
	m        map[kernelKey]*kernelAcc
	launches int64
	ns       float64
	spread   bool
}

// NewKernelAggregator returns an empty KernelAggregator.
func NewKernelAggregator() *KernelAggregator { return &KernelAggregator{m: map[kernelKey]*kernelAcc{}} }

// KeepSpread makes the table give each kernel its Spread. It keeps every
// launch's duration (4 bytes a launch, 8 for one over 4.29 s or not a
// whole number of ns; Table makes a kernel's 8 each for a moment), so
// memory grows with the launches:
// for a timeline's real per-launch times, not for streaming large exports.
func (a *KernelAggregator) KeepSpread() { a.spread = true }

// Add counts one launch. A launch without a duration, or with a device that
// is not an index, is an error that names its line.
func (a *KernelAggregator) Add(source string, l *Launch) error {
	if !l.Duration.Valid {
		return &SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf(
			"launch %d has no duration (no %s, nor %s in %q): export a page that has one, e.g. --page raw with --metrics %s",
			l.ID, DurationMetric, SOLDurationMetric, SOLSection, DurationMetric)}
	}
	dev := l.Device
	// Every sum of this table (each kernel's, its spread's) is at most
	// the total: a total that stays finite keeps them all finite.
	if err := AddFinite(&a.ns, l.Duration.Base, source, l, l.DurationTotal); err != nil {
		return err
	}
	k := kernelKey{l.Kernel, dev}
	e := a.m[k]
	if e == nil {
		e = &kernelAcc{}
		a.m[k] = e
	}
	e.ns += l.Duration.Base
	e.calls++
	if a.spread {
		e.durs.add(l.Duration.Base)
	}
	a.launches++
	return nil
}

// Clone is a copy of a that counts on apart from it.
func (a *KernelAggregator) Clone() *KernelAggregator {
	c := *a
	c.m = make(map[kernelKey]*kernelAcc, len(a.m))
	for k, e := range a.m {
		ec := *e
		ec.durs = e.durs.clone()
		c.m[k] = &ec
	}
	return &c
}

// Table returns every kernel, sorted.
func (a *KernelAggregator) Table(source string) KernelTable {
	recs := make([]KernelStats, 0, len(a.m))
	for k, e := range a.m {
		total := e.ns / 1e6
		r := KernelStats{KernelTotals: KernelTotals{Name: k.name, Device: k.device, TotalMS: total, Calls: e.calls}, MeanMS: total / float64(max(e.calls, 1))}
		if a.spread {
			r.Spread = kernelSpread(e.durs.all())
		}
		recs = append(recs, r)
	}
	SortKernels(recs)
	return KernelTable{Source: source, Launches: a.launches, TotalMS: a.ns / 1e6, Count: len(recs), Kernels: recs}
}

// kernelSpread summarizes durations in ns (sorting them in place).
func kernelSpread(ns []float64) *Spread {
	n := len(ns)
	if n == 0 {
		return nil
	}
	slices.Sort(ns)
	med := ns[n/2]
	if n%2 == 0 {
		med = (ns[n/2-1] + ns[n/2]) / 2
	}
	var mean float64
	for _, v := range ns {
		mean += v
	}
	mean /= float64(n)
	var ss float64
	for _, v := range ns {
		ss += (v - mean) * (v - mean)
	}
	scale := 1.0
	if math.IsInf(ss, 0) {
		// Durations so large that their squares are not finite (the sum
		// is: Add): the deviations scaled by the largest.
		scale, ss = max(mean-ns[0], ns[n-1]-mean), 0
		for _, v := range ns {
			d := (v - mean) / scale
			ss += d * d
		}
	}
	sd := 0.0
	if n > 1 {
		sd = scale * math.Sqrt(ss/float64(n-1))
	}
	return &Spread{MinMS: ns[0] / 1e6, MedianMS: med / 1e6, MaxMS: ns[n-1] / 1e6, StdDevMS: sd / 1e6}
}

// SortKernels orders kernels by total time descending, ties by name, then device.
func SortKernels(recs []KernelStats) {
	slices.SortFunc(recs, func(x, y KernelStats) int {
		if c := cmp.Compare(y.TotalMS, x.TotalMS); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return cmp.Compare(x.Device, y.Device)
	})
}

// Top returns the table cut to its n largest kernels; n <= 0 keeps all.
func (t KernelTable) Top(n int) KernelTable {
	if n > 0 && len(t.Kernels) > n {
		t.Kernels = t.Kernels[:n:n]
	}
	return t
}

// Covering returns the table cut to the fewest kernels, by total time, whose
// sum reaches share of all the table's time (0 < share <= 1), keeping at
// least least and at most most kernels (most <= 0: no cap).
func (t KernelTable) Covering(share float64, least, most int) KernelTable {
	n, sum := 0, 0.0
	for n < len(t.Kernels) && (n < least || sum < share*t.TotalMS) {
		sum += t.Kernels[n].TotalMS
		n++
	}
	if most > 0 && n > most {
		n = most
	}
	return t.Top(max(n, 1))
}

// Share is the part of all the table's time its kernels cover.
func (t KernelTable) Share() float64 {
	if t.TotalMS == 0 {
		return 0
	}
	sum := 0.0
	for _, k := range t.Kernels {
		sum += k.TotalMS
	}
	return sum / t.TotalMS
}
