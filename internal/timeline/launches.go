package timeline

import (
	"fmt"
	"iter"
	"path"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// level is a range as every report names it (model.Range).
func level(r *Range) model.Range { return model.Range{Domain: r.Domain, Name: r.Name} }

// Levels is the push/pop stack that r closes, outermost first: at most
// model.MaxRangeDepth+1 levels. A deeper stack is cut to its outermost
// ones (reports count what is deeper than model.MaxRangeDepth in its
// level-MaxRangeDepth range), so that the stacks of a runaway nesting do
// not grow with its square.
func (r *Range) Levels() []model.Range {
	if r == nil {
		return nil
	}
	n := min(r.Depth, model.MaxRangeDepth+1)
	c := r
	if r.capped != nil {
		c = r.capped
	}
	for c != nil && c.Depth > n {
		c = c.Parent
	}
	lv := make([]model.Range, n)
	for i := n - 1; c != nil && i >= 0; i, c = i-1, c.Parent {
		lv[i] = level(c)
	}
	return lv
}

// SetDepth sets a push/pop range's depth from its parent's, and the
// ancestor its levels start from: for a range added after the build.
func (r *Range) SetDepth() {
	r.Depth, r.capped = 1, r
	if r.Parent != nil {
		r.Depth = r.Parent.Depth + 1
		if r.Depth > model.MaxRangeDepth+1 && r.Parent.capped != nil {
			r.capped = r.Parent.capped
		}
	}
}

// Path is the region name of r's stack, as the regions report writes it:
// levels joined by "/", a named domain written Domain@name; a stack deeper
// than Levels keeps says how many levels it leaves out.
func (r *Range) Path() string {
	var lv []model.Range
	if r != nil {
		lv = r.Stack().Levels // made once a range
	}
	if r != nil && r.Depth > len(lv) {
		return model.Path(lv) + fmt.Sprintf("/… (%d levels deeper)", r.Depth-len(lv))
	}
	return model.Path(lv)
}

// Label is the range's own name as the regions report writes one level.
func (r *Range) Label() string { return level(r).String() }

// Launches yields every kernel as an ncu launch, process by process (by
// process id), each process's kernels in start order, so that the kernel
// table (model.KernelAggregator) and package regions aggregate them as
// they do ncu's exports:
// Kernel is the demangled name (the mangled one when there is none),
// Duration is gpu__time_duration.sum in ns (end - start), NVTX the
// attributed stack. ID counts a process's kernels from 0; Line is the
// kernel's line in its file. The Launch is one value, rewritten on every
// step: a caller keeps what it needs of it, not the pointer.
func (tl *Timeline) Launches() iter.Seq[*model.Launch] {
	return func(yield func(*model.Launch) bool) {
		for _, l := range tl.KernelLaunches() {
			if !yield(l) {
				return
			}
		}
	}
}

// Kernel is a launch as a query over a timeline's launches reads it: the
// execution with its function, launch call and range (Process.Fn,
// Process.APIOf, Process.RangeOf).
type Kernel struct {
	*KernelExecution
	*Function
	API   *API   // nil: missing
	Range *Range // nil: outside every range
}

// Kernel is the process's kernel i as a query reads it.
func (p *Process) Kernel(i int) *Kernel {
	k := &p.Kernels[i]
	return &Kernel{KernelExecution: k, Function: p.Fn(k), API: p.APIOf(k), Range: p.RangeOf(k)}
}

// KernelLaunches is Launches with each launch's kernel, one Kernel
// rewritten on every step as the Launch is.
func (tl *Timeline) KernelLaunches() iter.Seq2[*Kernel, *model.Launch] {
	return func(yield func(*Kernel, *model.Launch) bool) {
		l := new(model.Launch)
		kk := new(Kernel)
		for _, p := range tl.Processes {
			outside := map[int64]*model.Stack{}
			pname := path.Base(p.Header.Exe)
			for i := range p.Kernels {
				k := &p.Kernels[i]
				f, api, r := p.Fn(k), p.APIOf(k), p.RangeOf(k)
				var st *model.Stack
				switch {
				case r != nil:
					st = r.Stack()
				default:
					var tid int64
					if api != nil {
						tid = api.Thread
					}
					if st = outside[tid]; st == nil {
						st = &model.Stack{Thread: tid}
						outside[tid] = st
					}
				}
				ns := k.End - k.Start
				grid, block := f.Shape()
				*l = model.Launch{
					Line: int(k.Line), ID: int64(i), ProcessID: p.Header.PID, ProcessName: pname,
					Kernel: f.Name(), BlockSize: block, GridSize: grid,
					Device: model.DeviceID(f.Device), NVTX: st,
					Duration:       model.Value{Base: float64(ns), Unit: "ns", OrigUnit: "ns", Valid: true},
					DurationMetric: model.DurationMetric,
				}
				*kk = Kernel{KernelExecution: k, Function: f, API: api, Range: r}
				if !yield(kk, l) {
					return
				}
			}
		}
	}
}
