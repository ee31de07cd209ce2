// Package kernels aggregates profiled launches into one record per kernel
// name and device, and picks the top-N by total time. It holds typed results
// only: rendering is package report's job, parsing package ncu's.
package kernels

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/llm-perf-opt/deepprof/harness/ncu"
)

// Record is one kernel's totals: the kernels.json contract.
type Record struct {
	Name    string  `json:"kernel_name"`
	Device  int     `json:"device"`
	TotalMS float64 `json:"total_ms"`
	Calls   int64   `json:"calls"`
	MeanMS  float64 `json:"mean_ms"`
}

// Table is a kernel table with what it was made from.
type Table struct {
	Source   string   // the input's name
	Launches int64    // launches aggregated
	TotalMS  float64  // their summed duration
	Count    int      // kernels before any top-N cut
	Kernels  []Record // sorted by TotalMS descending, ties by name, then device
}

type key struct {
	name   string
	device int
}

type acc struct {
	ns    float64
	calls int64
}

// Aggregator sums launches per kernel name and device.
type Aggregator struct {
	m        map[key]*acc
	launches int64
	ns       float64
}

// NewAggregator returns an empty Aggregator.
func NewAggregator() *Aggregator { return &Aggregator{m: map[key]*acc{}} }

// Add counts one launch. A launch without a duration, or with a device that
// is not an index, is an error that names its line.
func (a *Aggregator) Add(source string, l *ncu.Launch) error {
	if !l.Duration.Valid {
		return &ncu.SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf(
			"launch %d has no duration (no %s, nor %s in %q): export a page that has one, e.g. --page raw with --metrics %s",
			l.ID, ncu.DurationMetric, ncu.SOLDurationMetric, ncu.SOLSection, ncu.DurationMetric)}
	}
	dev := 0
	if l.Device != "" {
		d, err := strconv.Atoi(l.Device)
		if err != nil {
			return &ncu.SyntaxError{File: source, Line: l.Line, Msg: fmt.Sprintf("launch %d: Device %q is not a device index", l.ID, l.Device)}
		}
		dev = d
	}
	k := key{l.Kernel, dev}
	e := a.m[k]
	if e == nil {
		e = &acc{}
		a.m[k] = e
	}
	e.ns += l.Duration.Base
	e.calls++
	a.launches++
	a.ns += l.Duration.Base
	return nil
}

// Table returns every kernel, sorted.
func (a *Aggregator) Table(source string) Table {
	recs := make([]Record, 0, len(a.m))
	for k, e := range a.m {
		total := e.ns / 1e6
		recs = append(recs, Record{Name: k.name, Device: k.device, TotalMS: total, Calls: e.calls, MeanMS: total / float64(max(e.calls, 1))})
	}
	Sort(recs)
	return Table{Source: source, Launches: a.launches, TotalMS: a.ns / 1e6, Count: len(recs), Kernels: recs}
}

// Sort orders records by total time descending, ties by name, then device.
func Sort(recs []Record) {
	slices.SortFunc(recs, func(x, y Record) int {
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
func (t Table) Top(n int) Table {
	if n > 0 && len(t.Kernels) > n {
		t.Kernels = t.Kernels[:n:n]
	}
	return t
}

// FromReader aggregates every launch of r. The first malformed row or
// launch ends it with a positioned error: a kernel table is not made from a
// file that was only partly understood.
func FromReader(r *ncu.Reader, source string) (Table, error) {
	a := NewAggregator()
	for r.Scan() {
		switch rec := r.Record().(type) {
		case *ncu.SyntaxError:
			return Table{}, rec
		case *ncu.Launch:
			if err := a.Add(source, rec); err != nil {
				return Table{}, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return Table{}, err
	}
	if a.launches == 0 {
		return Table{}, &ncu.SyntaxError{File: source, Line: 1, Msg: "the export holds no kernel launches"}
	}
	return a.Table(source), nil
}

// Covering returns the table cut to the fewest kernels, by total time, whose
// sum reaches share of all the table's time (0 < share <= 1), keeping at
// least least and at most most kernels (most <= 0: no cap).
func (t Table) Covering(share float64, least, most int) Table {
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
func (t Table) Share() float64 {
	if t.TotalMS == 0 {
		return 0
	}
	sum := 0.0
	for _, k := range t.Kernels {
		sum += k.TotalMS
	}
	return sum / t.TotalMS
}
