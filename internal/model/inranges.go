package model

import "slices"

// InRanges reports whether launch l ran inside one of the ranges include
// (nvtx.include): the timeline records the whole program (model
// build, warm-up), and the run's kernels are those the ncu passes gate on.
// No configured range: every launch.
func InRanges(l *Launch, include [][]Range) bool {
	if len(include) == 0 {
		return true
	}
	if l.NVTX == nil {
		return false
	}
	for _, inc := range include {
		if lv := inDomains(l.NVTX.Levels, inc); len(lv) >= len(inc) && slices.Equal(lv[:len(inc)], inc) {
			return true
		}
	}
	return false
}

// InRangesOf is InRanges as a filter of launches whose stacks are shared
// (each range's launches hold its one stack, timeline.Range.Stack, and a
// stack is never changed): each stack's answer is found once. For one
// goroutine.
func InRangesOf(include [][]Range) func(*Launch) bool {
	if len(include) == 0 {
		return func(*Launch) bool { return true }
	}
	memo := map[*Stack]bool{}
	var last *Stack // the stack asked last, whose answer is lastIn: a
	lastIn := false // range's launches come one after another
	return func(l *Launch) bool {
		if l.NVTX == nil {
			return false
		}
		if l.NVTX == last {
			return lastIn
		}
		in, ok := memo[l.NVTX]
		if !ok {
			in = InRanges(l, include)
			memo[l.NVTX] = in
		}
		last, lastIn = l.NVTX, in
		return in
	}
}

// inDomains is levels without the ranges of domains that path does not
// name: NVTX keeps a push/pop stack per domain, and ncu's --nvtx-include
// prefill/ asks the default domain's stack alone, whatever a library (NCCL,
// CCCL) pushed around it in its own.
func inDomains(levels, path []Range) []Range {
	keep := func(r Range) bool {
		return slices.ContainsFunc(path, func(p Range) bool { return p.Domain == r.Domain })
	}
	if !slices.ContainsFunc(levels, func(r Range) bool { return !keep(r) }) {
		return levels
	}
	out := make([]Range, 0, len(levels))
	for _, r := range levels {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
