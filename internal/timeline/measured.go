package timeline

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Measurement is one launch the library measured in the recorded process
// with CUPTI's range profiler (its M and W records): the metrics of its
// kernel, and the host time the measuring took, which the timeline leaves
// out (Process.Cut). CUPTI gives the replayed launch no time of its own:
// where the measurement has its duration (model.DurationMetric) and its
// window, the launch stays among the process's Kernels with that duration,
// placed at the window's end, after its launch call began (Placed), and the
// rest of the window is cut; else it is left out of them.
type Measurement struct {
	Correlation uint32
	// Function is the launch's kernel, configuration and stream, from its K
	// record; nil when the file has none.
	*Function
	Metrics []cupti.Metric
	// Window is the measuring's host time; zero when the file has no W
	// record of the launch.
	Window cupti.Window
	Placed bool
}

// Named reports whether the measurement gave metrics of a kernel its
// records name: a launch measured, as the session counts it and the
// rebuild reads it.
func (m *Measurement) Named() bool { return m.Function != nil && len(m.Metrics) > 0 }

// duration is the launch's duration as the replay measured it, in ns.
func (m *Measurement) duration() (int64, bool) {
	for _, mt := range m.Metrics {
		if mt.Name == model.DurationMetric && mt.Value > 0 {
			return int64(mt.Value + 0.5), true
		}
	}
	return 0, false
}

// cuts are a process's measuring windows, by start, overlaps merged, with
// the time cut before each.
type cuts struct {
	w      []cupti.Window
	before []int64 // before[i]: the time of w[:i]
}

func newCuts(ws []cupti.Window) cuts {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(a, b cupti.Window) int { return cmp.Compare(a.Start, b.Start) })
	var c cuts
	for _, w := range ws {
		if n := len(c.w); n > 0 && w.Start <= c.w[n-1].End {
			c.w[n-1].End = max(c.w[n-1].End, w.End)
			continue
		}
		c.w = append(c.w, w)
	}
	c.before = make([]int64, len(c.w)+1)
	for i, w := range c.w {
		c.before[i+1] = c.before[i] + (w.End - w.Start)
	}
	return c
}

// at is t with the windows before it taken out; a time inside a window is
// its start's.
func (c cuts) at(t int64) int64 {
	if len(c.w) == 0 {
		return t
	}
	i := sort.Search(len(c.w), func(i int) bool { return c.w[i].Start >= t })
	if i == 0 {
		return t
	}
	last := c.w[i-1]
	return t - c.before[i-1] - (min(t, last.End) - last.Start)
}

// total is the time cut.
func (c cuts) total() int64 { return c.before[len(c.before)-1] }

// Cut is t, a time of p's file (CUPTI's clock), on p's timeline: the
// library's measuring windows before it taken out, as every time of p is.
func (p *Process) Cut(t int64) int64 { return p.cuts.at(t) }

// MeasuredAt are the times, on p's timeline, where the library measured a
// launch (the start of each measuring window, cut): the work around them
// ran with the GPU's queue drained and a launch replayed.
func (p *Process) MeasuredAt() []int64 {
	var out []int64
	for _, m := range p.Measured {
		if m.Window.End > m.Window.Start {
			out = append(out, p.Cut(m.Window.Start))
		}
	}
	slices.Sort(out)
	return out
}

// Windows are the library's measuring windows in p as they are cut out of
// its times (Cut), on CUPTI's clock, by start, overlaps merged: a measured
// launch that keeps the replay's duration keeps it out of its window.
func (p *Process) Windows() []cupti.Window {
	return slices.Clone(p.cuts.w)
}

// CutNS is the host time of the library's measuring taken out of p's
// timeline.
func (p *Process) CutNS() int64 {
	if len(p.cuts.before) == 0 {
		return 0
	}
	return p.cuts.total()
}

// measure takes the measured launches out of p's kernels (Measured) and
// the measuring windows out of every time of p read so far.
func (bp *building) measure() {
	p := bp.p
	if len(bp.metrics) == 0 && len(bp.windows) == 0 {
		return
	}
	measured := map[uint32]*Measurement{}
	get := func(corr uint32) *Measurement {
		m := measured[corr]
		if m == nil {
			m = &Measurement{Correlation: corr}
			measured[corr] = m
		}
		return m
	}
	for _, m := range bp.metrics {
		get(m.Correlation).Metrics = append(get(m.Correlation).Metrics, m)
	}
	for _, w := range bp.windows {
		get(w.Correlation).Window = w
	}
	for _, k := range p.Kernels {
		if m := measured[k.Correlation]; m != nil {
			m.Function = p.Fn(&k)
			d, ok := m.duration()
			m.Placed = ok && m.Window.End-m.Window.Start > d
		}
	}
	var windows []cupti.Window
	for _, m := range measured {
		w := m.Window
		if m.Placed {
			d, _ := m.duration()
			w.End -= d
		}
		if w.End > w.Start {
			windows = append(windows, w)
		}
	}
	p.cuts = newCuts(windows)
	p.overlapsCut(measured)
	kept := p.Kernels[:0]
	for _, k := range p.Kernels {
		if m := measured[k.Correlation]; m != nil {
			if !m.Placed {
				continue
			}
			d, _ := m.duration()
			k.Start, k.End = m.Window.End-d, m.Window.End
		}
		k.Start, k.End = p.Cut(k.Start), p.Cut(k.End)
		kept = append(kept, k)
	}
	clear(p.Kernels[len(kept):])
	p.Kernels = kept
	for i := range p.Copies {
		c := &p.Copies[i]
		c.Start, c.End = p.Cut(c.Start), p.Cut(c.End)
	}
	for i := range p.Marks {
		p.Marks[i].TS = p.Cut(p.Marks[i].TS)
	}
	for _, m := range measured {
		p.Measured = append(p.Measured, *m)
	}
	slices.SortFunc(p.Measured, func(a, b Measurement) int { return cmp.Compare(a.Correlation, b.Correlation) })
	bp.metrics, bp.windows = nil, nil
}

// overlapsCut makes an anomaly of the kernels and copies (other than the
// measured launches) that ran while the library measured: the GPU's queue
// was not drained before the window, so cutting it shortens them. Times are
// p's as read, before the cut.
func (p *Process) overlapsCut(measured map[uint32]*Measurement) {
	in := func(start, end int64) bool {
		for _, w := range p.cuts.w {
			if start < w.End && end > w.Start {
				return true
			}
		}
		return false
	}
	n, first := 0, 0
	for _, k := range p.Kernels {
		if measured[k.Correlation] == nil && in(k.Start, k.End) {
			if n == 0 {
				first = int(k.Line)
			}
			n++
		}
	}
	for _, c := range p.Copies {
		if in(c.Start, c.End) {
			if n == 0 {
				first = c.Line
			}
			n++
		}
	}
	if n > 0 {
		p.anomaly(false, "", "%s:%d: %d kernel(s) or copies ran while deepprof's library measured a launch (the GPU's queue was not drained first): cutting the measuring out of the timeline shortens them", p.File, first, n)
	}
}

// measuredNotice says what p's measuring took out of it, "" when nothing.
func (p *Process) measuredNotice() string {
	if len(p.Measured) == 0 {
		return ""
	}
	placed := 0
	for _, m := range p.Measured {
		if m.Placed {
			placed++
		}
	}
	return fmt.Sprintf("%s: %d launch(es) measured in the run by deepprof's range profiler (CUPTI's kernel replay): "+
		"their %s of measuring are cut out of the timeline; %d keep the duration the replay measured (%s), placed at the measuring's end, and %d, with none, are left out of the kernel times",
		p.File, len(p.Measured), time.Duration(p.CutNS()).Round(time.Millisecond), placed, model.DurationMetric, len(p.Measured)-placed)
}
