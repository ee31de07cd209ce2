package phases

import (
	"cmp"
	"math"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// LaunchBoundIdleShare is the share of a phase's time the GPU may sit idle
// before the phase is named launch-bound. Past one half, the CPU side
// (launch calls, Python, synchronization) decides more of the phase's
// duration than the kernels do: faster kernels can save at most the busy
// part, while CUDA graphs, fewer and larger launches (bigger batches, fused
// kernels) shrink the idle part.
const LaunchBoundIdleShare = 0.5

// HostAheadLatencyNS is the median launch latency (a launch call's start to
// its kernel's start) from which a phase's kernels are said to wait in a
// queue: an idle GPU starts a launched kernel within tens of µs (5–50 µs on
// the recorded H100 and H200 runs), so a launch that waits longer waits on
// the GPU's earlier work, not the GPU on the host.
const HostAheadLatencyNS = 100e3

// judge sets the phase's verdict on what sets its pace. Only a phase with
// kernels idle past LaunchBoundIdleShare is judged: it is launch-bound
// where the gaps between its own kernels make at least half of its idle
// time (the GPU waits between launches); otherwise, with a median launch
// latency of HostAheadLatencyNS or more and other kernels running on its
// device for at least half of its idle time, the host is ahead (its idle is
// queue lag behind that work: the GPU sets the pace). An idle the device
// spends idle too, with long launch latencies, is the host's own work
// (set-up, module loading), neither.
func judge(p *facts.Phase) {
	p.LaunchBound, p.HostAhead = false, false
	if p.Kernels == 0 || p.IdleShare <= LaunchBoundIdleShare {
		return
	}
	if 2*p.Gaps.SumNS >= p.IdleNS {
		p.LaunchBound = true
		return
	}
	p.HostAhead = p.Latency.Count > 0 && p.Latency.MedianNS >= HostAheadLatencyNS && 2*p.QueuedNS >= p.IdleNS
}

// DefaultTopGaps is how many of the largest idle gaps a phase keeps.
const DefaultTopGaps = 5

// Options choose the phases.
type Options struct {
	// Depth is the NVTX push/pop depth of a phase: 1 for outermost ranges
	// ("prefill", "decode_all"), 2 for the ranges inside them.
	Depth int
	// TopGaps is how many of the largest gaps each phase keeps (0: the
	// default, DefaultTopGaps).
	TopGaps int
	// Communication says whether a kernel (by its name, Kernel.Name) is a
	// collective or other communication kernel: package kernels'
	// "communication" category, given here so that this package holds no
	// name rule. Nil: no kernel is. It splits each phase's busy time
	// (Phase.Communication) and compares the ranks (PhaseReport.Balance)
	// only in a run with a communication kernel, or with processes with
	// kernels on more than one device between them.
	Communication func(kernel string) bool
	// Domains, when not nil, are the NVTX domains whose ranges are phases
	// ("" the default domain): the program's own (nvtx.domain), so that a
	// library's ranges (NCCL's ncclAllReduce around every collective,
	// CCCL's) are not phases, and Depth counts the program's ranges only.
	// Nil: ranges of every domain.
	Domains []string
	// Steady is the warm-up decision (Timeline.SteadyState): a phase's
	// instances in a warm-up are left out of its figures and summed apart
	// (Phase.Warmup). Nil: every instance counts.
	Steady *Steady
	// NestedDepth, when deeper than Depth, also reports the ranges inside
	// the phases down to that depth (PhaseScope.Nested: "decode_all/
	// decode_step", "prefill/vision_encoder"), each with its own busy and
	// idle time, their busy time split into compute and communication as
	// a phase's is; they are not phases (no balance across the ranks).
	NestedDepth int
}

// ancestry finds the phase range of each range (its ancestor at
// opt.Depth, counting the ranges of opt.Domains only, every range when
// nil), once per range: time linear in the ranges, however deep they nest.
type ancestry struct {
	opt   Options
	depth map[*timeline.Range]int             // ranges of Domains from the outermost down to r, r included
	at    map[*timeline.Range]*timeline.Range // the phase range of r; nil: none
}

func newAncestry(opt Options) *ancestry {
	return &ancestry{opt: opt, depth: map[*timeline.Range]int{}, at: map[*timeline.Range]*timeline.Range{}}
}

func (a *ancestry) counts(r *timeline.Range) bool {
	return a.opt.Domains == nil || slices.Contains(a.opt.Domains, r.Domain)
}

func (a *ancestry) depthOf(r *timeline.Range) int {
	if r == nil {
		return 0
	}
	if d, ok := a.depth[r]; ok {
		return d
	}
	d := a.depthOf(r.Parent)
	if a.counts(r) {
		d++
	}
	a.depth[r] = d
	return d
}

// of is the phase range of a launch made inside r; nil when r is not
// that deep.
func (a *ancestry) of(r *timeline.Range) *timeline.Range {
	if r == nil {
		return nil
	}
	if x, ok := a.at[r]; ok {
		return x
	}
	var x *timeline.Range
	switch d := a.depthOf(r); {
	case d < a.opt.Depth:
	case d == a.opt.Depth && a.counts(r):
		x = r
	default:
		x = a.of(r.Parent)
	}
	a.at[r] = x
	return x
}

type instAcc struct {
	r     *timeline.Range
	span  Span // r's span in the instance model (Spans)
	any   bool
	first int64 // first activity start
	last  int64 // last activity end
	// num is the instance's number in its phase, from 1, by span start
	// (finish).
	num int
	// own merges its kernels' busy stretches as they come (in start
	// order); compute and comm, its compute and its communication
	// kernels' apart, where the phase's busy time is split.
	own           merger
	compute, comm *merger
	// prevEnd and prevLast are the end of its last finished stretch and
	// the kernel that ends it, for the idle gap before the next.
	prevEnd  int64
	prevLast int32
	hasPrev  bool
	// ownNS is the time of its stretches inside its span; devNS the time
	// the device's kernels (every kernel of the process on it) are busy
	// inside its span (sweepDevice).
	ownNS, devNS int64
}

// busy is one stretch of time in which some kernel runs on a device: the
// union of overlapping kernels. First is the kernel that starts it, last the
// one that ends it (indexes of the process's kernels).
type busy struct {
	start, end  int64
	first, last int32
}

// merger merges kernels, given in start order, into busy stretches,
// keeping only the stretch being merged.
type merger struct {
	cur  busy
	open bool
	ns   int64 // the time of the stretches finished
}

// add merges kernel i (start to end) and returns the stretch it finished,
// if any: the one before i, when i starts after its end.
func (m *merger) add(start, end int64, i int32) (done busy, ok bool) {
	if m.open && start <= m.cur.end {
		if end > m.cur.end {
			m.cur.end, m.cur.last = end, i
		}
		return busy{}, false
	}
	done, ok = m.cur, m.open
	if ok {
		m.ns += done.end - done.start
	}
	m.cur, m.open = busy{start, end, i, i}, true
	return done, ok
}

// close finishes the stretch being merged, if any.
func (m *merger) close() (done busy, ok bool) {
	done, ok = m.cur, m.open
	if ok {
		m.ns += done.end - done.start
	}
	m.open = false
	return done, ok
}

// inside is the time of b inside [s, e).
func inside(b busy, s, e int64) int64 { return max(0, min(b.end, e)-max(b.start, s)) }

type phaseAcc struct {
	p    facts.Phase
	warm *phaseAcc // the warm-up instances' (Options.Steady)
	// measured: the instances' left out for a measurement (leftOut)
	measured *phaseAcc
	order    int64 // the first instance's start, for sorting
	insts    map[*timeline.Range]*instAcc
	list     []*instAcc
	lat      latencies
	calls    map[*timeline.API]bool // the graph launches counted
	top      int
	// gaps are the largest idle gaps yet, longest first, with the
	// instance each is in (numbered at finish).
	gaps []instGap
	// collectives counts the phase's own communication kernels.
	collectives int64
	// leadSteps is, for a warm-up part made of a one-instance phase's
	// leading steps (Steady.Leading), how many steps those are, of leadOf.
	leadSteps, leadOf int
}

// instGap is an idle gap of an instance whose number is not known yet.
type instGap struct {
	facts.Gap
	in *instAcc
}

func newPhaseAcc(name string, top int) *phaseAcc {
	return &phaseAcc{p: facts.Phase{Name: name}, insts: map[*timeline.Range]*instAcc{}, top: top}
}

func (a *phaseAcc) inst(r *timeline.Range) *instAcc {
	in := a.insts[r]
	if in == nil {
		in = &instAcc{r: r}
		a.insts[r] = in
		a.list = append(a.list, in)
	}
	return in
}

func (in *instAcc) activity(start, end int64) {
	if !in.any {
		in.any, in.first, in.last = true, start, end
		return
	}
	in.first = min(in.first, start)
	in.last = max(in.last, end)
}

// warmup is the accumulator of the phase's warm-up instances.
func (a *phaseAcc) warmup() *phaseAcc {
	if a.warm == nil {
		a.warm = newPhaseAcc(a.p.Name, a.top)
	}
	return a.warm
}

// measuring is the accumulator of the phase's instances left out for one
// of the library's measurements (Steady.LeftForMeasuring).
func (a *phaseAcc) measuring() *phaseAcc {
	if a.measured == nil {
		a.measured = newPhaseAcc(a.p.Name, a.top)
	}
	return a.measured
}

// leftOut is the accumulator of r's instance where the steady state
// leaves it out (the warm-up's or the measured ones'), nil where it keeps
// it.
func (a *phaseAcc) leftOut(s *Steady, r *timeline.Range) *phaseAcc {
	switch {
	case r == nil || !s.InWarmup(r):
		return nil
	case s.LeftForMeasuring(r):
		return a.measuring()
	}
	return a.warmup()
}

// kernel adds kernel i, k, of the process pk to instance in (collective: k
// is communication, where pk splits the busy time).
func (a *phaseAcc) kernel(pk *procKernels, in *instAcc, k *timeline.KernelExecution, api *timeline.API, i int32, collective bool) {
	in.activity(k.Start, k.End)
	if b, ok := in.own.add(k.Start, k.End, i); ok {
		a.stretch(pk, in, b)
	}
	if pk.split {
		if in.compute == nil {
			in.compute, in.comm = &merger{}, &merger{}
		}
		if collective {
			in.comm.add(k.Start, k.End, i)
		} else {
			in.compute.add(k.Start, k.End, i)
		}
	}
	a.p.Kernels++
	if collective {
		a.collectives++
	}
	a.p.KernelNS += k.End - k.Start
	if api != nil {
		a.lat.add(k.Start - api.Start)
		// a call that launched one kernel is counted with it; one that
		// launched several (a graph launch), once
		if api.Kernels > 1 {
			if a.calls[api] {
				return
			}
			if a.calls == nil {
				a.calls = map[*timeline.API]bool{}
			}
			a.calls[api] = true
		}
		a.p.LaunchCalls.Count++
		a.p.LaunchCalls.NS += api.End - api.Start
	}
}

// stretch counts b, a finished busy stretch of instance in: its busy
// time, its time inside the instance's span, and the idle gap before it.
func (a *phaseAcc) stretch(pk *procKernels, in *instAcc, b busy) {
	a.p.BusyNS += b.end - b.start
	if s, ok := in.closedSpan(); ok {
		in.ownNS += inside(b, s.Start, s.End)
	} else {
		// an open range's or the whole run's span runs from its first
		// activity to its last (spanStart, spanEnd): every stretch of
		// it is inside
		in.ownNS += b.end - b.start
	}
	if in.hasPrev {
		a.gap(pk, in, in.prevEnd, in.prevLast, b)
	}
	in.prevEnd, in.prevLast, in.hasPrev = b.end, b.last, true
}

// gap counts the idle gap from end (kernel last's) to b and keeps it when
// it is among the largest, or ties with the last of them: which of tied
// gaps the phase keeps is the instances' numbers' to say (finish).
func (a *phaseAcc) gap(pk *procKernels, in *instAcc, end int64, last int32, b busy) {
	g := facts.Gap{AtNS: end - pk.origin, NS: b.start - end}
	a.p.Gaps.SumNS += g.NS
	a.p.Gaps.Count++
	l := a.gaps
	if len(l) >= a.top && gapBefore(l[len(l)-1].Gap, g) {
		return
	}
	i := 0
	for i < len(l) && !gapBefore(g, l[i].Gap) {
		i++
	}
	g.Before, g.After = pk.name(last), pk.name(b.first)
	l = slices.Insert(l, i, instGap{g, in})
	for len(l) > a.top && gapBefore(l[a.top-1].Gap, l[len(l)-1].Gap) {
		l = l[:len(l)-1]
	}
	a.gaps = l
}

// gapBefore orders gaps longest first, then earliest (then, in finish, by
// instance).
func gapBefore(x, y facts.Gap) bool {
	if x.NS != y.NS {
		return x.NS > y.NS
	}
	return x.AtNS < y.AtNS
}

func (a *phaseAcc) copy(in *instAcc, c *timeline.Copy) {
	in.activity(c.Start, c.End)
	s := &a.p.Memset
	if c.Kind != "" {
		s = &a.p.Memcpy
	}
	s.Count++
	s.NS += c.End - c.Start
	s.Bytes += c.Bytes
}

// procKernels is what the accumulators need of a process's kernels:
// their names, for the gaps, where the time counts from, and whether busy
// time is split into communication and compute.
type procKernels struct {
	p      *timeline.Process
	origin int64
	split  bool
}

// name is the name of the kernel at index i.
func (pk *procKernels) name(i int32) string { return pk.p.Fn(&pk.p.Kernels[i]).Name() }

// instances are a's instances and those of its warm-up and measured parts.
func (a *phaseAcc) instances(out []*instAcc) []*instAcc {
	out = append(out, a.list...)
	if a.warm != nil {
		out = a.warm.instances(out)
	}
	if a.measured != nil {
		out = a.measured.instances(out)
	}
	return out
}

// close finishes the stretches its instances are merging.
func (a *phaseAcc) close(pk *procKernels) {
	for _, in := range a.list {
		if b, ok := in.own.close(); ok {
			a.stretch(pk, in, b)
		}
		if in.compute != nil {
			in.compute.close()
			in.comm.close()
		}
	}
	if a.warm != nil {
		a.warm.close(pk)
	}
	if a.measured != nil {
		a.measured.close(pk)
	}
}

// sweepDevice sets each instance's devNS: the time the busy stretches of
// the process's kernels on device d take inside its span. One pass over
// the kernels, the instances by span start.
func sweepDevice(p *timeline.Process, d uint32, insts []*instAcc) {
	slices.SortFunc(insts, bySpanStart)
	var active []*instAcc
	next := 0
	add := func(b busy) {
		for next < len(insts) && insts[next].spanStart() < b.end {
			active = append(active, insts[next])
			next++
		}
		kept := active[:0]
		for _, in := range active {
			s, e := in.spanStart(), in.spanEnd()
			if e <= b.start {
				continue // the stretches after b start later still
			}
			in.devNS += inside(b, s, e)
			kept = append(kept, in)
		}
		clear(active[len(kept):])
		active = kept
	}
	var m merger
	for i := range p.Kernels {
		k := &p.Kernels[i]
		if p.Fn(k).Device != d {
			continue
		}
		if b, ok := m.add(k.Start, k.End, int32(i)); ok {
			add(b)
		}
	}
	if b, ok := m.close(); ok {
		add(b)
	}
}

// finish sums the instances' spans and their stretches, numbers them by
// span start, and judges the phase. close and sweepDevice come first.
func (a *phaseAcc) finish(split bool) facts.Phase {
	slices.SortFunc(a.list, bySpanStart)
	var cs *facts.CommunicationSplit
	if split {
		cs = &facts.CommunicationSplit{Collectives: a.collectives}
	}
	for i, in := range a.list {
		in.num = i + 1
		a.p.SpanNS += in.spanEnd() - in.spanStart()
		a.p.QueuedNS += max(0, in.devNS-in.ownNS)
		if cs != nil && in.compute != nil {
			cs.ComputeNS += in.compute.ns
			cs.CommunicationNS += in.comm.ns
		}
	}
	a.p.Gaps.Largest = make([]facts.Gap, len(a.gaps))
	for i, g := range a.gaps {
		g.Instance = g.in.num
		a.p.Gaps.Largest[i] = g.Gap
	}
	slices.SortStableFunc(a.p.Gaps.Largest, func(x, y facts.Gap) int {
		switch {
		case gapBefore(x, y):
			return -1
		case gapBefore(y, x):
			return 1
		}
		return cmp.Compare(x.Instance, y.Instance)
	})
	a.p.Gaps.Largest = a.p.Gaps.Largest[:min(len(a.p.Gaps.Largest), a.top)]
	if cs != nil {
		// Busy is the union of compute and communication, so what is in
		// both is what the union does not add: |A|+|B|-|A∪B|.
		cs.OverlapNS = cs.ComputeNS + cs.CommunicationNS - a.p.BusyNS
		cs.ExposedCommunicationNS = cs.CommunicationNS - cs.OverlapNS
		a.p.Communication = cs
	}
	a.p.Instances = len(a.list)
	a.p.LeadingSteps, a.p.LeadingOf = a.leadSteps, a.leadOf
	a.p.IdleNS = a.p.SpanNS - a.p.BusyNS
	if a.p.SpanNS > 0 {
		a.p.IdleShare = float64(a.p.IdleNS) / float64(a.p.SpanNS)
	}
	a.p.Latency = a.lat.summary()
	a.calls = nil
	judge(&a.p)
	if a.warm != nil {
		w := a.warm.finish(split)
		a.p.Warmup = &w
	}
	if a.measured != nil {
		m := a.measured.finish(split)
		a.p.Measured = &m
	}
	return a.p
}

// closedSpan is the instance's span where its range is closed (Spans);
// false for an open range or the whole run, whose span its activity makes.
func (in *instAcc) closedSpan() (Span, bool) {
	return in.span, in.r != nil && in.r.Closed
}

// bySpanStart orders instances by where their spans start.
func bySpanStart(x, y *instAcc) int { return cmp.Compare(x.spanStart(), y.spanStart()) }

// spanStart is where the instance starts: its range's span (Spans), or
// for an open range or the whole run its first activity.
func (in *instAcc) spanStart() int64 {
	if s, ok := in.closedSpan(); ok {
		return s.Start
	}
	if in.r != nil && (!in.any || in.r.Start < in.first) {
		return in.r.Start
	}
	return in.first
}

// spanEnd is where the instance ends: its range's span, or its last
// activity (an open range, the whole run).
func (in *instAcc) spanEnd() int64 {
	if s, ok := in.closedSpan(); ok {
		return s.End
	}
	return in.last
}

// latencies are a phase's launch latencies, ns: those from 0 to 2^32-1 in
// four bytes each, the others (a launch queued over 4.29 s) apart.
type latencies struct {
	small []uint32
	other []int64
}

func (l *latencies) add(ns int64) {
	if ns >= 0 && ns <= math.MaxUint32 {
		l.small = append(l.small, uint32(ns))
		return
	}
	l.other = append(l.other, ns)
}

// summary is their count, mean, median and largest; the mean sums them in
// ascending order.
func (l *latencies) summary() facts.Latency {
	slices.Sort(l.small)
	slices.Sort(l.other)
	neg, _ := slices.BinarySearch(l.other, 0) // the others below 0 come first
	n := len(l.small) + len(l.other)
	if n == 0 {
		return facts.Latency{}
	}
	at := func(i int) int64 {
		switch {
		case i < neg:
			return l.other[i]
		case i < neg+len(l.small):
			return int64(l.small[i-neg])
		}
		return l.other[i-len(l.small)]
	}
	var sum float64
	for i := range n {
		sum += float64(at(i))
	}
	med := float64(at(n / 2))
	if n%2 == 0 {
		med = (float64(at(n/2-1)) + float64(at(n/2))) / 2
	}
	return facts.Latency{Count: int64(n), MeanNS: sum / float64(n), MedianNS: med, MaxNS: at(n - 1)}
}

// MaxPhases is how many phases, and how many nested regions, a scope
// lists: the largest by kernel time, in their order; the rest are summed
// (PhaseScope.PhasesLeftOut, NestedLeftOut). A program that opens a range
// per iteration ("decode_step 0", "decode_step 1", ...) has thousands,
// each in the region report.
const MaxPhases = 100

// Of summarizes the phases of tl, every process on every device it used:
// the whole run, and each NVTX region at opt.Depth (MaxPhases of them).
func Of(tl *timeline.Timeline, opt Options) *facts.PhaseReport {
	rep := of(tl, opt, 0, false, spanCache{})
	for i := range rep.Scopes {
		sc := &rep.Scopes[i]
		sc.Phases, sc.PhasesLeftOut = largest(sc.Phases)
		var more *facts.LeftOut
		sc.Nested, more = largest(sc.Nested)
		sc.NestedLeftOut = plusLeftOut(sc.NestedLeftOut, more)
	}
	return rep
}

// plusLeftOut is what a and b leave out together (nil: neither leaves out
// any).
func plusLeftOut(a, b *facts.LeftOut) *facts.LeftOut {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &facts.LeftOut{Regions: a.Regions + b.Regions, Kernels: a.Kernels + b.Kernels, KernelNS: a.KernelNS + b.KernelNS}
}

// largestAccs is, of accs (in their order), the keep largest by kernel
// time (ties: the earlier), in their order, and the sum of the rest (nil:
// none): largest's choice, made before the phases are finished, so that
// those left out are never finished.
func largestAccs(accs []*phaseAcc, keep int) ([]*phaseAcc, *facts.LeftOut) {
	if len(accs) <= keep {
		return accs, nil
	}
	idx := make([]int, len(accs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(accs[b].p.KernelNS, accs[a].p.KernelNS) })
	slices.Sort(idx[:keep])
	kept := make([]*phaseAcc, 0, keep)
	for _, i := range idx[:keep] {
		kept = append(kept, accs[i])
	}
	out := &facts.LeftOut{}
	for _, i := range idx[keep:] {
		out.Regions++
		out.Kernels += accs[i].p.Kernels
		out.KernelNS += accs[i].p.KernelNS
	}
	return kept, out
}

// largest is ps's MaxPhases largest by kernel time (ties: the earlier),
// in their order, and the sum of the rest (nil: none).
func largest(ps []facts.Phase) ([]facts.Phase, *facts.LeftOut) {
	if len(ps) <= MaxPhases {
		return ps, nil
	}
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(ps[b].KernelNS, ps[a].KernelNS) })
	slices.Sort(idx[:MaxPhases])
	kept := make([]facts.Phase, 0, MaxPhases)
	for _, i := range idx[:MaxPhases] {
		kept = append(kept, ps[i])
	}
	out := &facts.LeftOut{}
	for _, i := range idx[MaxPhases:] {
		out.Regions++
		out.Kernels += ps[i].Kernels
		out.KernelNS += ps[i].KernelNS
	}
	return kept, out
}

// devAcc is one device's accumulators of a process: its whole run, its
// phases by path in the order met, and the last range phase was asked of
// with its answer (the kernels of a range come one after another).
type devAcc struct {
	device  uint32
	run     *phaseAcc
	all     *instAcc // run's one instance
	phases  map[string]*phaseAcc
	order   []*phaseAcc
	lastR   *timeline.Range
	last    found
	lastSet bool
}

// found is where activity in one range goes on one device: its phase (nil:
// none) and the instance, the accumulator the steady state leaves the
// instance to (nil: the phase's own), and the instance's leading warm-up
// steps where it has some (Steady.Leading).
type found struct {
	pa, out *phaseAcc
	in      *instAcc
	lead    Lead
	leads   bool
}

// procPhases finds, for one process, the accumulators each kernel and copy
// adds to.
type procPhases struct {
	opt   Options
	top   int
	paths map[*timeline.Range]string
	spans map[*timeline.Range]Span
	anc   *ancestry
	devs  map[uint32]*devAcc
	last  *devAcc
}

func newProcPhases(p *timeline.Process, spans map[*timeline.Range]Span, opt Options, top int) *procPhases {
	return &procPhases{opt: opt, top: top, paths: map[*timeline.Range]string{}, spans: spans, anc: newAncestry(opt),
		devs: map[uint32]*devAcc{}}
}

// dev is device d's accumulators, made the first time.
func (pp *procPhases) dev(d uint32) *devAcc {
	if pp.last != nil && pp.last.device == d {
		return pp.last
	}
	a := pp.devs[d]
	if a == nil {
		a = &devAcc{device: d, run: newPhaseAcc("", pp.top), phases: map[string]*phaseAcc{}}
		a.all = a.run.inst(nil)
		pp.devs[d] = a
	}
	pp.last = a
	return a
}

// phase is where activity in range r on a's device goes; its pa is nil
// outside every phase. It depends on a and r alone: the last answer is
// kept.
func (pp *procPhases) phase(a *devAcc, r *timeline.Range) found {
	if a.lastSet && a.lastR == r {
		return a.last
	}
	f := pp.phaseOf(a, r)
	a.lastR, a.last, a.lastSet = r, f, true
	return f
}

func (pp *procPhases) phaseOf(a *devAcc, r *timeline.Range) found {
	if r = pp.anc.of(r); r == nil {
		return found{}
	}
	name, ok := pp.paths[r]
	if !ok {
		name = r.Path()
		pp.paths[r] = name
	}
	pa := a.phases[name]
	if pa == nil {
		pa = newPhaseAcc(name, pp.top)
		pa.order = r.Start
		a.phases[name] = pa
		a.order = append(a.order, pa)
	}
	pa.order = min(pa.order, r.Start)
	f := found{pa: pa, out: pa.leftOut(pp.opt.Steady, r)}
	acc := pa
	if f.out != nil {
		acc = f.out
	}
	f.in = acc.inst(r)
	f.in.span = pp.spans[r]
	if f.lead, f.leads = pp.opt.Steady.Leading(r); f.leads {
		f.in.span.Start = f.lead.End
	}
	return f
}

// to is the accumulator and instance of activity in f's range that starts
// at start, and whether it is in steady state: the phase's own, or the one
// the steady state leaves the instance to, or, for activity in the
// instance's leading warm-up steps (Steady.Leading), its warm-up part.
func (pp *procPhases) to(f found, start int64) (*phaseAcc, *instAcc, bool) {
	switch {
	case f.out != nil:
		return f.out, f.in, false
	case f.leads && start < f.lead.End:
		w, in := pp.warmPart(f.pa, f.in.r, f.lead)
		return w, in, false
	}
	return f.pa, f.in, true
}

// warmPart is the warm-up part of r's instance, whose leading warm-up
// steps are l.
func (pp *procPhases) warmPart(pa *phaseAcc, r *timeline.Range, l Lead) (*phaseAcc, *instAcc) {
	w := pa.warmup()
	in := w.inst(r)
	in.span = Span{Start: pp.spans[r].Start, End: l.End}
	w.leadSteps, w.leadOf = l.Steps, l.Of
	return w, in
}

// of is every phase of tl at opt.Depth, with the nested regions below them
// (Options.NestedDepth). keep, when not 0, is how many phases of each
// scope are finished, the largest by kernel time; the rest are summed in
// the scope's PhasesLeftOut. The nested regions are found with keep
// MaxPhases: the largest MaxPhases of all depths together (Of) are among
// the largest MaxPhases of their own depth. nested: the phases alone,
// for addNested (each scope's Run, the whole run's, is left zero, and the
// ranks are not balanced).
func of(tl *timeline.Timeline, opt Options, keep int, nested bool, spans spanCache) *facts.PhaseReport {
	top := opt.TopGaps
	if top <= 0 {
		top = DefaultTopGaps
	}
	rep := &facts.PhaseReport{Depth: opt.Depth, LaunchBoundIdleShare: LaunchBoundIdleShare, Scopes: []facts.PhaseScope{}}
	collective := communicationRule(opt.Communication)
	split := splitsCommunication(tl, collective)
	calls := collectiveCalls{}
	for _, p := range tl.Processes {
		pp := newProcPhases(p, spans.of(p), opt, top)
		pk := &procKernels{p: p, origin: p.Header.StartNS, split: split}
		isCollective := byFunction(p, collective)
		for i := range p.Kernels {
			k := &p.Kernels[i]
			f, api := p.Fn(k), p.APIOf(k)
			a := pp.dev(f.Device)
			c := split && isCollective(k)
			if !nested {
				a.run.kernel(pk, a.all, k, api, int32(i), c)
			}
			sc := facts.Rank{ProcessID: p.Header.PID, Device: model.DeviceID(f.Device)}
			if c {
				calls.add("", sc, k.End-k.Start)
			}
			if f := pp.phase(a, p.RangeOf(k)); f.pa != nil {
				pa, in, steady := pp.to(f, k.Start)
				pa.kernel(pk, in, k, api, int32(i), c)
				if c && steady {
					calls.add(pa.p.Name, sc, k.End-k.Start)
				}
			}
		}
		for i := range p.Copies {
			c := &p.Copies[i]
			a := pp.dev(c.Device)
			if !nested {
				a.run.copy(a.all, c)
			}
			if f := pp.phase(a, c.Range); f.pa != nil {
				pa, in, _ := pp.to(f, c.Start)
				pa.copy(in, c)
			}
		}
		ids := make([]uint32, 0, len(pp.devs))
		for d := range pp.devs {
			ids = append(ids, d)
		}
		slices.Sort(ids)
		for _, d := range ids {
			a := pp.devs[d]
			slices.SortStableFunc(a.order, func(x, y *phaseAcc) int { return cmp.Compare(x.order, y.order) })
			sc := facts.PhaseScope{ProcessID: p.Header.PID, Device: model.DeviceID(d), Phases: make([]facts.Phase, 0, len(a.order))}
			order := a.order
			if keep > 0 {
				order, sc.PhasesLeftOut = largestAccs(order, keep)
			}
			var insts []*instAcc
			if !nested {
				a.run.close(pk)
				insts = a.run.instances(insts)
			}
			for _, pa := range order {
				pa.close(pk)
				insts = pa.instances(insts)
			}
			sweepDevice(p, d, insts)
			if !nested {
				sc.Run = a.run.finish(split)
			}
			if r, ok := p.Header.Rank(); ok {
				sc.Rank = &r
			}
			for _, pa := range order {
				sc.Phases = append(sc.Phases, pa.finish(split))
			}
			rep.Scopes = append(rep.Scopes, sc)
		}
	}
	if split && !nested {
		rep.Balance = balance(rep.Scopes)
		for i := range rep.Balance {
			b := &rep.Balance[i]
			b.NetCommunicationNS, b.CollectiveCalls = calls.net(b.Phase)
		}
	}
	addNested(tl, opt, rep, spans)
	return rep
}

// spanCache holds each process's instance spans (Spans), made once for
// the depths of one report.
type spanCache map[*timeline.Process]map[*timeline.Range]Span

func (c spanCache) of(p *timeline.Process) map[*timeline.Range]Span {
	s, ok := c[p]
	if !ok {
		s = Spans(p)
		c[p] = s
	}
	return s
}

// addNested adds to each scope of rep its phases of the depths below
// opt.Depth down to opt.NestedDepth, at most MaxPhases of each depth.
func addNested(tl *timeline.Timeline, opt Options, rep *facts.PhaseReport, spans spanCache) {
	for d := opt.Depth + 1; d <= opt.NestedDepth; d++ {
		sub := of(tl, Options{Depth: d, TopGaps: opt.TopGaps, Communication: opt.Communication, Domains: opt.Domains, Steady: opt.Steady}, MaxPhases, true, spans)
		for _, ss := range sub.Scopes {
			for i := range rep.Scopes {
				if sc := &rep.Scopes[i]; sc.ProcessID == ss.ProcessID && sc.Device == ss.Device {
					sc.Nested = append(sc.Nested, ss.Phases...)
					sc.NestedLeftOut = plusLeftOut(sc.NestedLeftOut, ss.PhasesLeftOut)
				}
			}
		}
	}
}
