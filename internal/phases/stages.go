package phases

import (
	"cmp"
	"slices"

	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// RangeStage is the wall time of every instance of one NVTX range name in one
// process: what a program's stages took, measured from its own ranges (for
// a program that writes no stage report). An outermost range pushed in
// runs (once a token between prefills: runsOf) is timed run by run, from
// its first instance's start to its last's end, each run as many steps
// as it has instances. An instance is its span in the
// one instance model (Spans): from its push, or the end of the previous
// instance of its name on its thread where later, to its pop or, where
// later, to the end of the last kernel or copy launched inside it.
type RangeStage struct {
	ProcessID int64 `json:"process_id"`
	// Name is the range as the regions report names one level: "prefill",
	// "LLM@prefill". Ranges of one name at different depths are one stage.
	Name string `json:"name"`
	// Domain is the range's NVTX domain ("": the default one).
	Domain string             `json:"domain,omitempty"`
	Kind   timeline.RangeKind `json:"kind"`
	// DurationsNS holds each closed instance's wall time, in start order.
	DurationsNS []int64 `json:"durations_ns"`
	// Steps holds, beside DurationsNS, each instance's steps (stepsOf: a
	// decode_all's decode_step instances); nil when every instance is one.
	Steps []int `json:"steps,omitempty"`
	// Unclosed counts instances still open when the file ended.
	Unclosed int `json:"unclosed"`
	// InWarmupNS holds the closed instances that lie inside a warm-up
	// instance of an enclosing stage (Steady): left out of DurationsNS,
	// with it.
	InWarmupNS []int64 `json:"in_warmup_ns,omitempty"`
	// Depth is the first instance's push/pop depth (1: outermost; 0 for a
	// start/end range), Parent its enclosing range's name ("" at depth 1).
	Depth  int    `json:"depth"`
	Parent string `json:"parent,omitempty"`
}

// Stages lists the range names of every process, each with its instances'
// wall times; processes by id, names in order of first start. An instance
// inside a warm-up instance of an enclosing stage (steady's decision; nil:
// none) is in InWarmupNS, not DurationsNS: the stage's own warm-up rule
// then sees the instances steady decided it on.
//
// domains (nil: every domain) are the ranges whose nesting makes steps
// and runs, as SteadyState's: a library's ranges (NCCL's, CCCL's) inside
// or between the program's are neither.
func Stages(tl *timeline.Timeline, steady *Steady, domains []string) []RangeStage {
	out := []RangeStage{}
	for _, p := range tl.Processes {
		spans := Spans(p)
		steps := stepsOf(p, domains)
		runs := map[string][][]*timeline.Range{}
		for _, run := range runsOf(p, domains) {
			l := run[0].Label()
			runs[l] = append(runs[l], run)
		}
		type key struct {
			name string
			kind timeline.RangeKind
		}
		idx := map[key]int{}
		base := len(out)
		for _, r := range p.Ranges {
			k := key{r.Label(), r.Kind}
			i, ok := idx[k]
			if !ok {
				i = len(out) - base
				idx[k] = i
				st := RangeStage{ProcessID: p.Header.PID, Name: k.name, Domain: r.Domain, Kind: r.Kind, DurationsNS: []int64{}, Depth: r.Depth}
				if r.Parent != nil {
					st.Parent = r.Parent.Label()
				}
				out = append(out, st)
			}
			s := &out[base+i]
			if rs := runs[k.name]; r.Parent == nil && r.Closed && r.Kind == timeline.PushPop && inRuns(rs) {
				// Pushed in runs: a repeat is a run (done once, at its
				// first instance), its instances its steps.
				for _, run := range rs {
					if run[0] == r {
						s.DurationsNS = append(s.DurationsNS, spans[run[len(run)-1]].End-spans[r].Start)
						s.Steps = append(s.Steps, len(run))
					}
				}
				continue
			}
			switch {
			case r.Closed && steady.InWarmup(r.Parent):
				s.InWarmupNS = append(s.InWarmupNS, spans[r].NS())
			case r.Closed:
				s.DurationsNS = append(s.DurationsNS, spans[r].NS())
				s.Steps = append(s.Steps, max(steps[r], 1))
			default:
				s.Unclosed++
			}
		}
	}
	for i := range out {
		if !slices.ContainsFunc(out[i].Steps, func(n int) bool { return n > 1 }) {
			out[i].Steps = nil
		}
	}
	return out
}

// workDone is when the last kernel or copy launched inside each push/pop
// range of p (or a range inside it) ended: each range's own work first,
// then each range's to its parent, the deepest first, so that ranges
// nested thousands deep cost one step each.
func workDone(p *timeline.Process) map[*timeline.Range]int64 {
	done := map[*timeline.Range]int64{}
	own := func(r *timeline.Range, end int64) {
		if r != nil && end > done[r] {
			done[r] = end
		}
	}
	// the kernels' latest end by their range's index (RangeOf), first
	byRange := make([]int64, len(p.RangeList)+1)
	for i := range p.Kernels {
		k := &p.Kernels[i]
		byRange[k.Range] = max(byRange[k.Range], k.End)
	}
	for i, r := range p.RangeList {
		own(r, byRange[i+1])
	}
	for i := range p.Copies {
		own(p.Copies[i].Range, p.Copies[i].End)
	}
	depth := map[*timeline.Range]int{}
	var order, chain []*timeline.Range
	for r := range done {
		// r and its ancestors not seen yet, innermost first.
		chain = chain[:0]
		q := r
		for ; q != nil; q = q.Parent {
			if _, seen := depth[q]; seen {
				break
			}
			chain = append(chain, q)
		}
		d := 0
		if q != nil {
			d = depth[q] + 1
		}
		for i := len(chain) - 1; i >= 0; i-- {
			depth[chain[i]] = d
			order = append(order, chain[i])
			d++
		}
	}
	slices.SortStableFunc(order, func(a, b *timeline.Range) int { return cmp.Compare(depth[b], depth[a]) })
	for _, r := range order {
		if r.Parent != nil && done[r] > done[r.Parent] {
			done[r.Parent] = done[r]
		}
	}
	return done
}
