package phases

import (
	"cmp"
	"slices"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Steady is the one warm-up decision of a timeline: for each stage (a
// push/pop range name, process by process) which of its leading instances
// are warm-up (model.Sample.Warmup: compared per step, an instance of a
// repeating child range, a decode_all of its decode_step instances, being
// that many steps), on the instances' spans as Spans measures them. An
// outermost stage pushed in runs (a decode range once a token, runsOf) is
// decided run by run, each run a repeat of as many steps as it holds: a
// slow generate is left out whole. An
// instance inside a warm-up instance is warm-up with it, and is not among
// the instances its own stage's decision is made on. Every figure built
// from instances (the stages, the phases' busy and idle time, gaps, launch
// latency, communication, the decode's steps) reads this one decision.
type Steady struct {
	warm map[*timeline.Range]bool // the warm-up instances (not their insides)
	// measured are those of warm left out for a measurement
	// (leaveMeasured), not by the warm-up rule
	measured map[*timeline.Range]bool
	// measuredSteady: a stage's every steady repeat held a measurement
	measuredSteady bool
	memo           map[*timeline.Range]bool // InWarmup, once per range
	lead           map[*timeline.Range]Lead // Leading
}

// Lead is the warm-up part of a range that is the one instance of its
// path in its process, not warm-up itself, and holds warm-up instances of
// a stage inside it (a solve whose first iteration is a one-time set-up):
// the steady state of such a range is over its steps, so its leading part,
// from its start to End, the end of the last warm-up step inside it, is
// its warm-up. Warm-up steps are leading ones (model.Sample.Warmup).
type Lead struct {
	End   int64 // the last warm-up step's end (Spans)
	Steps int   // the warm-up steps
	Of    int   // the instances of that step's range inside it, warm-up included
}

// SteadyState makes the warm-up decision of every push/pop range of the
// domains given (nil: every domain), stage by stage in order of their
// shallowest instance, so that a stage's decision sees only the instances
// outside its enclosing stages' warm-ups.
func SteadyState(tl *timeline.Timeline, domains []string) *Steady {
	s := &Steady{warm: map[*timeline.Range]bool{}, measured: map[*timeline.Range]bool{}, memo: map[*timeline.Range]bool{}, lead: map[*timeline.Range]Lead{}}
	peers := peersOf(tl)
	for _, p := range tl.Processes {
		spans := Spans(p)
		steps := stepsOf(p, domains)
		measured := measuredSpans(tl, p, peers)
		type stage struct {
			label string
			depth int
			insts []*timeline.Range
		}
		var order []*stage
		byLabel := map[string]*stage{}
		for _, r := range p.Ranges {
			if r.Kind != timeline.PushPop || !r.Closed || !inDomains(r.Domain, domains) {
				continue
			}
			l := r.Label()
			st := byLabel[l]
			if st == nil {
				st = &stage{label: l, depth: r.Depth}
				byLabel[l] = st
				order = append(order, st)
			}
			st.depth = min(st.depth, r.Depth)
			st.insts = append(st.insts, r)
		}
		slices.SortStableFunc(order, func(a, b *stage) int { return cmp.Compare(a.depth, b.depth) })
		runs := map[string][][]*timeline.Range{} // the outermost stages' runs, by label
		for _, run := range runsOf(p, domains) {
			l := run[0].Label()
			runs[l] = append(runs[l], run)
		}
		for _, st := range order {
			// The repeats: each instance, or for an outermost stage pushed
			// in runs (once a token), each run, its instances its steps.
			var kept [][]*timeline.Range
			byRun := inRuns(runs[st.label])
			if byRun {
				kept = runs[st.label]
			} else {
				for _, r := range st.insts {
					if !s.inWarmup(r.Parent) {
						kept = append(kept, []*timeline.Range{r})
					}
				}
			}
			var sample model.Sample
			for _, run := range kept {
				first, last := run[0], run[len(run)-1]
				sample.Repeats = append(sample.Repeats, float64(spans[last].End-spans[first].Start)/1e6)
				n := len(run)
				if !byRun {
					n = max(steps[first], 1)
				}
				sample.Steps = append(sample.Steps, float64(n))
			}
			n, _ := sample.Warmup()
			if n > 0 {
				for _, run := range kept[:n] {
					for _, r := range run {
						s.warm[r] = true
					}
				}
				clear(s.memo) // a decision made after a lookup
			}
			s.leaveMeasured(kept[n:], spans, measured)
		}
		s.leads(p, spans, domains)
	}
	// Every range's answer, found once here: InWarmup then only reads, so
	// that the analyses of one rebuild may ask it at once.
	for _, p := range tl.Processes {
		for _, r := range p.Ranges {
			s.memo[r] = s.inWarmup(r)
		}
	}
	return s
}

// peersOf says, for two processes of tl, whether the library's measuring
// in one disturbs the other: they are of one machine (CUPTI's one clock)
// and either ranks of one job (a rank's collectives wait for the rank
// that measures) or on a GPU of both (the GPU replays the measured launch;
// the timeline numbers the GPUs of its processes alike). Nil when no
// process measured.
func peersOf(tl *timeline.Timeline) func(p, q *timeline.Process) bool {
	if !slices.ContainsFunc(tl.Processes, func(p *timeline.Process) bool { return len(p.Windows()) > 0 }) {
		return nil
	}
	gpus := map[*timeline.Process]map[uint32]bool{}
	for _, p := range tl.Processes {
		on := map[uint32]bool{}
		for i := range p.Kernels {
			on[p.Fn(&p.Kernels[i]).Device] = true
		}
		gpus[p] = on
	}
	return func(p, q *timeline.Process) bool {
		if p == q || p.Header.Machine() != q.Header.Machine() {
			return false
		}
		if _, ok := p.Header.Rank(); ok {
			if _, ok := q.Header.Rank(); ok {
				return true
			}
		}
		for d := range gpus[q] {
			if gpus[p][d] {
				return true
			}
		}
		return false
	}
}

// measuredSpans are the times, on p's timeline, that deepprof's library's
// measuring disturbed: each launch it measured in p (a point: its window
// is cut out of p's times), and each window of a process whose measuring
// disturbs p (peers), as p's times. Sorted by start.
func measuredSpans(tl *timeline.Timeline, p *timeline.Process, peers func(p, q *timeline.Process) bool) []Span {
	var out []Span
	for _, t := range p.MeasuredAt() {
		out = append(out, Span{Start: t, End: t})
	}
	for _, q := range tl.Processes {
		if peers == nil || !peers(p, q) {
			continue
		}
		for _, w := range q.Windows() {
			out = append(out, Span{Start: p.Cut(w.Start), End: p.Cut(w.End)})
		}
	}
	slices.SortFunc(out, func(a, b Span) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// leaveMeasured marks as warm-up the steady repeats (runs of instances,
// after the warm-up decision) that overlap a time the library's measuring
// disturbed (at, measuredSpans): the GPU's queue was drained there and a
// launch replayed, or a peer waited for that, so they are left out of the
// steady state with the warm-up, unless every one does (then they stay,
// and MeasuredSteady says so).
func (s *Steady) leaveMeasured(steady [][]*timeline.Range, spans map[*timeline.Range]Span, at []Span) {
	if len(at) == 0 || len(steady) == 0 {
		return
	}
	var hit [][]*timeline.Range
	for _, run := range steady {
		from, to := spans[run[0]].Start, spans[run[len(run)-1]].End
		// a disturbance ending at from or later, among those starting by
		// to
		n, _ := slices.BinarySearchFunc(at, to+1, func(a Span, t int64) int { return cmp.Compare(a.Start, t) })
		if slices.ContainsFunc(at[:n], func(a Span) bool { return a.End >= from }) {
			hit = append(hit, run)
		}
	}
	if len(hit) == len(steady) {
		s.measuredSteady = true
		return
	}
	for _, run := range hit {
		for _, r := range run {
			if !s.warm[r] {
				s.warm[r], s.measured[r] = true, true
			}
		}
	}
	if len(hit) > 0 {
		clear(s.memo)
	}
}

// InWarmupByRule reports whether r is left out of the steady state by the
// warm-up rule: in a warm-up (InWarmup), not for a measurement.
func (s *Steady) InWarmupByRule(r *timeline.Range) bool {
	return s.InWarmup(r) && !s.LeftForMeasuring(r)
}

// LeftForMeasuring reports whether r is left out of the steady state for
// one of the library's measurements (its own or a peer's, leaveMeasured),
// not by the warm-up rule: r, or a range it is inside, was left out for
// one, and none of them by the rule (the rule wins).
func (s *Steady) LeftForMeasuring(r *timeline.Range) bool {
	if s == nil {
		return false
	}
	measured := false
	for x := r; x != nil; x = x.Parent {
		if s.warm[x] {
			if !s.measured[x] {
				return false
			}
			measured = true
		}
	}
	return measured
}

// MeasuredSteady reports whether some stage's every steady repeat held one
// of the library's measurements or overlapped a peer's (measuredSpans), so
// that they were kept in the steady state, measured.
func (s *Steady) MeasuredSteady() bool { return s != nil && s.measuredSteady }

// leads finds p's ranges of domains with a warm-up part (Lead).
func (s *Steady) leads(p *timeline.Process, spans map[*timeline.Range]Span, domains []string) {
	count := map[string]int{}
	for _, r := range p.Ranges {
		if r.Kind == timeline.PushPop && inDomains(r.Domain, domains) {
			count[r.Path()]++
		}
	}
	for _, x := range p.Ranges {
		if !s.warm[x] || s.measured[x] || !x.Closed {
			continue
		}
		for r := x.Parent; r != nil; r = r.Parent {
			if !r.Closed || !inDomains(r.Domain, domains) || s.inWarmup(r) || count[r.Path()] != 1 {
				continue
			}
			l := s.lead[r]
			l.End = max(l.End, spans[x].End)
			l.Steps++
			if l.Of == 0 {
				for _, y := range p.Ranges {
					if y.Closed && y.Label() == x.Label() && y.Thread == x.Thread && y.Depth == x.Depth && y.Ancestor(r.Depth) == r {
						l.Of++
					}
				}
			}
			s.lead[r] = l
		}
	}
}

// Leading is r's warm-up part (Lead), ok false when it has none.
func (s *Steady) Leading(r *timeline.Range) (Lead, bool) {
	if s == nil || r == nil {
		return Lead{}, false
	}
	l, ok := s.lead[r]
	return l, ok
}

// InWarmup reports whether r is a warm-up instance or lies inside one. A
// nil Steady (no decision) and a nil range are in no warm-up. Once
// SteadyState has returned it only reads, and is safe for concurrent use;
// it answers at once for the ranges of the timeline SteadyState was given,
// and walks up from any other (a range added since) each time.
func (s *Steady) InWarmup(r *timeline.Range) bool {
	if s == nil || r == nil {
		return false
	}
	if v, ok := s.memo[r]; ok {
		return v
	}
	return s.warm[r] || s.InWarmup(r.Parent)
}

// inWarmup is InWarmup, keeping each answer it finds (SteadyState's own
// use, before it returns).
func (s *Steady) inWarmup(r *timeline.Range) bool {
	if r == nil {
		return false
	}
	if v, ok := s.memo[r]; ok {
		return v
	}
	v := s.warm[r] || s.inWarmup(r.Parent)
	s.memo[r] = v
	return v
}

// IsWarmup reports whether r itself is the warm-up instance of its stage
// (not one inside it).
func (s *Steady) IsWarmup(r *timeline.Range) bool { return s != nil && s.warm[r] }

// LaunchInWarmup reports whether a launch made inside r (its innermost
// range) at start lies in a warm-up: whether its phase instance, its
// outermost range of domains (nil: every domain) as Of takes a phase at
// depth 1, is in one, or it starts in that instance's warm-up part (Lead).
// A launch outside every range of domains is in none.
func (s *Steady) LaunchInWarmup(r *timeline.Range, start int64, domains []string) bool {
	phase := phaseOf(r, domains)
	if l, ok := s.Leading(phase); ok && start < l.End {
		return true
	}
	return s.InWarmup(phase)
}

// LaunchMeasured reports whether a launch LaunchInWarmup leaves out lies in
// a phase instance left out for one of the library's measurements
// (LeftForMeasuring), not in a warm-up.
func (s *Steady) LaunchMeasured(r *timeline.Range, domains []string) bool {
	return s.LeftForMeasuring(phaseOf(r, domains))
}

// phaseOf is the outermost range of domains r is inside, itself included.
func phaseOf(r *timeline.Range, domains []string) *timeline.Range {
	var phase *timeline.Range
	for ; r != nil; r = r.Parent {
		if inDomains(r.Domain, domains) {
			phase = r
		}
	}
	return phase
}
