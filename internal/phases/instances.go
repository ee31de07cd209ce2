package phases

import (
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Span is one range instance's time, CPU ns.
type Span struct{ Start, End int64 }

// NS is the span's length.
func (s Span) NS() int64 { return s.End - s.Start }

// Spans is the one instance model of a process's ranges, for every range
// (the program's, automatic and inferred ones): a closed push/pop
// instance runs from the later of its push, the end of the previous
// sibling on its thread (the range before it with the same parent: the
// previous instance of the same range, or the prefill before a decode) and
// its parent's start, to the later of its pop and the end of the last
// kernel or copy launched inside it (or inside a range inside it). So a
// host that runs ahead of the GPU does not make instances overlap:
// siblings follow each other, sub-instances lie inside their parent, and
// each carries the GPU work it launched, not the queue's lag before it. A
// start/end range runs from its start to its end. Ranges not closed have
// no span.
func Spans(p *timeline.Process) map[*timeline.Range]Span {
	done := workDone(p)
	type key struct {
		thread int64
		parent *timeline.Range
	}
	prev := map[key]int64{}
	out := make(map[*timeline.Range]Span, len(p.Ranges))
	// p.Ranges is in start order, a parent before the ranges inside it.
	for _, r := range p.Ranges {
		if !r.Closed {
			continue
		}
		if r.Kind != timeline.PushPop {
			out[r] = Span{r.Start, r.End}
			continue
		}
		s := r.Start
		k := key{r.Thread, r.Parent}
		if e, ok := prev[k]; ok && e > s {
			s = e
		}
		if ps, ok := out[r.Parent]; ok && r.Parent != nil && ps.Start > s {
			s = ps.Start
		}
		e := max(r.End, done[r], s)
		out[r] = Span{s, e}
		prev[k] = e
	}
	return out
}

// stepsOf is how many steps each closed push/pop instance of p holds: the
// count of its most frequent child range (of domains; nil: every
// domain) when that child repeats, else 1. A decode_all of 31
// decode_step instances is 31 steps; a range with no repeating child is
// one.
func stepsOf(p *timeline.Process, domains []string) map[*timeline.Range]int {
	type key struct {
		parent *timeline.Range
		label  string
	}
	counts := map[key]int{}
	for _, r := range p.Ranges {
		if r.Kind != timeline.PushPop || !r.Closed || r.Parent == nil || !inDomains(r.Domain, domains) {
			continue
		}
		counts[key{r.Parent, r.Label()}]++
	}
	out := map[*timeline.Range]int{}
	for k, n := range counts {
		if n > 1 && n > out[k.parent] {
			out[k.parent] = n
		}
	}
	return out
}

func inDomains(d string, domains []string) bool {
	if domains == nil {
		return true
	}
	for _, x := range domains {
		if x == d {
			return true
		}
	}
	return false
}

// runsOf groups p's outermost closed push/pop ranges (of domains; nil:
// every domain) into runs: the instances of one label that follow each
// other on a thread with no outermost range of another label between
// them. A range pushed once a token (decode, between prefills) comes in
// runs of a generate's steps; prefill and decode_all in runs of one. Each
// run is in start order; runs are in order of their first instance.
func runsOf(p *timeline.Process, domains []string) [][]*timeline.Range {
	var out [][]*timeline.Range
	last := map[int64]int{} // each thread's run being built, an index in out
	for _, r := range p.Ranges {
		if r.Kind != timeline.PushPop || !r.Closed || r.Parent != nil || !inDomains(r.Domain, domains) {
			continue
		}
		if i, ok := last[r.Thread]; ok && out[i][0].Label() == r.Label() {
			out[i] = append(out[i], r)
			continue
		}
		last[r.Thread] = len(out)
		out = append(out, []*timeline.Range{r})
	}
	return out
}

// inRuns says whether a stage's runs are what it repeats: there are
// several (another range comes between them) and some hold more than one
// instance. A range pushed once a token between prefills is, whatever
// ranges it holds (a layer's); back-to-back generates, one run, are not.
func inRuns(runs [][]*timeline.Range) bool {
	for _, run := range runs {
		if len(run) > 1 {
			return len(runs) > 1
		}
	}
	return false
}
