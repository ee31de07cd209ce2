package phases

import (
	"cmp"
	"math"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// InferredTTFTFrom is where TTFT starts in phases inferred from the
// kernel stream: the host's time before the prefill's first launch (a
// framework's dispatch of the call) is in no launch, and not in TTFT.
const InferredTTFTFrom = "the prefill's first launch (inferred phases: the host's time before it, the call's dispatch, is not seen)"

// GenerateMark is the NVTX mark deepprof's automatic ranges put at each
// generate() call, in any program: where TTFT starts.
const GenerateMark = "deepprof:generate"

// run is one run of step instances: consecutive siblings of one label.
type run struct {
	steps []*timeline.Range
}

// DecodeSteps finds the decode's steps in the push/pop ranges of domain:
// the step range is, among the decode's ranges (names says which stages
// are the decode; their children count too), the one that repeats most
// in a row, so a decode_step in each decode_all, or a range pushed once a
// token between prefills. A run is the steps of one label that follow each
// other with no sibling of another name between them (a generate's).
// A run with any step in a warm-up (steady) is left out. A step runs from
// its start (Spans) to the next step's start, so the host's time between
// steps (sampling, the token's wait) is a step's, as the program's own
// clock reads a token; a steady step is the steady runs' steps so
// measured, pooled (a run of one step: its own span). nil when no range
// of the decode repeats.
func DecodeSteps(tl *timeline.Timeline, steady *Steady, domain string, names model.Names) *facts.Decode {
	byLabel := map[string][]stepRuns{}
	var labels []string
	for _, p := range tl.Processes {
		spans := Spans(p)
		for l, rs := range siblingRuns(p, domain, names) {
			if _, ok := byLabel[l]; !ok {
				labels = append(labels, l)
			}
			byLabel[l] = append(byLabel[l], stepRuns{p, spans, rs})
		}
	}
	best := stepLabel(labels, byLabel)
	if best == "" {
		return nil
	}
	out := &facts.Decode{Step: best}
	var t stepTally
	for _, f := range byLabel[best] {
		t.measure(out, f, steady, domain, names)
	}
	if out.SteadySteps == 0 || t.spanNS <= 0 {
		return out
	}
	t.figures(out)
	return out
}

// stepRuns is one process's runs of one label, with the spans of its
// ranges.
type stepRuns struct {
	p     *timeline.Process
	spans map[*timeline.Range]Span
	runs  []run
}

// siblingRuns is, by label, the runs of p's closed push/pop ranges of
// domain that are the decode or inside it: consecutive siblings (children
// of one parent, or a thread's outermost ranges) of one label, in start
// order.
func siblingRuns(p *timeline.Process, domain string, names model.Names) map[string][]run {
	// siblings: each parent's (nil: the thread's outermost) closed
	// push/pop children of domain, in start order.
	type key struct {
		parent *timeline.Range
		thread int64
	}
	sib := map[key][]*timeline.Range{}
	var order []key
	for _, r := range p.Ranges {
		if r.Kind != timeline.PushPop || !r.Closed || r.Domain != domain {
			continue
		}
		k := key{r.Parent, r.Thread}
		if _, ok := sib[k]; !ok {
			order = append(order, k)
		}
		sib[k] = append(sib[k], r)
	}
	runs := map[string][]run{}
	for _, k := range order {
		list := sib[k]
		for i := 0; i < len(list); {
			j := i + 1
			for j < len(list) && list[j].Label() == list[i].Label() {
				j++
			}
			l := list[i].Label()
			parent := ""
			if list[i].Parent != nil {
				parent = list[i].Parent.Label()
			}
			if names.Of(l, "") == model.Decode || parent != "" && names.Of(parent, "") == model.Decode {
				runs[l] = append(runs[l], run{steps: list[i:j]})
			}
			i = j
		}
	}
	return runs
}

// stepLabel is the step label: of the labels whose runs hold more than one
// step on average, the outermost (a decode a token, not the layers inside
// it), then the one with the longest runs; the first in sorted order on a
// tie. "" when none repeats. It sorts labels.
func stepLabel(labels []string, byLabel map[string][]stepRuns) string {
	best, bestLen, bestDepth := "", 1.0, 0
	slices.Sort(labels)
	for _, l := range labels {
		var n, steps int
		depth := math.MaxInt
		for _, f := range byLabel[l] {
			for _, r := range f.runs {
				n++
				steps += len(r.steps)
				depth = min(depth, r.steps[0].Depth)
			}
		}
		avg := float64(steps) / float64(n)
		if avg > 1 && (best == "" || depth < bestDepth || depth == bestDepth && avg > bestLen) {
			best, bestLen, bestDepth = l, avg, depth
		}
	}
	return best
}

// stepTally is the steady steps' figures summed over runs: their step
// periods, each run's mean step, and the time to the first token with
// where it was measured from.
type stepTally struct {
	spanNS   int64
	periods  int // the steps spanNS holds
	perRun   []float64
	ttft     []float64
	gen      bool // a TTFT measured from the generate() call
	inferred bool // a TTFT measured from an inferred prefill
}

// measure counts f's runs into out (runs and steps; a warm-up run listed)
// and tallies each steady run's steps and first token into t.
func (t *stepTally) measure(out *facts.Decode, f stepRuns, steady *Steady, domain string, names model.Names) {
	marks := generateMarks(f.p)
	prefills := prefillSpans(f.p, f.spans, steady, domain, names)
	prevEnd := make(map[int64]int64) // each thread's last run's end
	for idx, r := range f.runs {
		out.Runs++
		out.Steps += len(r.steps)
		thread := r.steps[0].Thread
		s, e := f.spans[r.steps[0]].Start, f.spans[r.steps[len(r.steps)-1]].End
		// A step runs from its start to the next step's: the run's
		// periods, its last step's own span where it is the only one.
		n, last := len(r.steps)-1, f.spans[r.steps[len(r.steps)-1]].Start
		if n == 0 {
			n, last = 1, e
		}
		per := float64(last-s) / float64(n) / 1e6
		if _, seen := prevEnd[thread]; !seen {
			prevEnd[thread] = math.MinInt64
		}
		// A run is a warm-up where its generate began with one-time
		// work: it lies in a warm-up instance (its decode_all's), its
		// prefill or its first step is one, or every step is (a run
		// decided whole). A steady run leaves out only its steps that
		// are warm-up (a slow step later on).
		i, hasPrefill := lastIndexBefore(prefills[thread], prevEnd[thread], s)
		warm := steady.InWarmup(r.steps[0].Parent) || steady.InWarmup(r.steps[0]) ||
			hasPrefill && prefills[thread][i].warm
		if warm {
			// left out for a measurement where no warm-up by the rule made it one
			byRule := steady.InWarmupByRule(r.steps[0].Parent) || steady.InWarmupByRule(r.steps[0]) ||
				hasPrefill && prefills[thread][i].warmByRule
			out.Warmup = append(out.Warmup, facts.DecodeRun{ProcessID: f.p.Header.PID, Index: idx + 1, Steps: len(r.steps), StepMS: model.RoundMS(per), Measured: !byRule})
		} else {
			var ns int64
			k := 0
			for j := 0; j+1 < len(r.steps); j++ {
				if !steady.InWarmup(r.steps[j]) {
					ns += f.spans[r.steps[j+1]].Start - f.spans[r.steps[j]].Start
					k++
				}
			}
			if len(r.steps) == 1 {
				ns, k = e-s, 1
			}
			if k == 0 {
				prevEnd[thread] = e
				continue
			}
			out.SteadyRuns++
			out.SteadySteps += len(r.steps)
			t.spanNS += ns
			t.periods += k
			t.perRun = append(t.perRun, float64(ns)/float64(k)/1e6)
			// The first token: from the generate() call, else from
			// the prefill, since the previous run ended.
			first := s // the first token: where the first step starts
			if hasPrefill && prefills[thread][i].inferred {
				// An inferred prefill holds the sampling's kernels
				// too: the token is out when they end.
				first = prefills[thread][i].span.End
			}
			if m, ok := lastBefore(marks[thread], prevEnd[thread], s); ok {
				t.ttft, t.gen = append(t.ttft, float64(first-m)/1e6), true
			} else if hasPrefill {
				t.ttft = append(t.ttft, float64(first-prefills[thread][i].span.Start)/1e6)
				t.inferred = t.inferred || prefills[thread][i].inferred
			}
		}
		prevEnd[thread] = e
	}
}

// figures sets out's step time (the tallied periods pooled), the spread of
// the runs' mean steps (with more than one run), and the mean TTFT with
// where it starts: the generate() call, an inferred prefill's first
// launch, else the prefill's start.
func (t *stepTally) figures(out *facts.Decode) {
	out.StepMS = model.RoundMS(float64(t.spanNS) / float64(t.periods) / 1e6)
	if len(t.perRun) > 1 {
		sd := model.Summarize(t.perRun).SDMS
		out.StepSDMS = &sd
	}
	if len(t.ttft) > 0 {
		m := model.RoundMS(model.Summarize(t.ttft).MeanMS)
		out.TTFTMS = &m
		switch {
		case t.gen:
			out.TTFTFrom = "the generate() call"
		case t.inferred:
			out.TTFTFrom = InferredTTFTFrom
		default:
			out.TTFTFrom = "the prefill's start"
		}
	}
}

// generateMarks is each thread's GenerateMark times, in order.
func generateMarks(p *timeline.Process) map[int64][]int64 {
	out := map[int64][]int64{}
	for _, m := range p.Marks {
		if m.Name == GenerateMark {
			out[m.Thread] = append(out[m.Thread], m.TS)
		}
	}
	for _, ts := range out {
		slices.Sort(ts)
	}
	return out
}

// prefill is one prefill instance: its span, and whether it was inferred.
type prefill struct {
	span       Span
	inferred   bool
	warm       bool // a warm-up instance (Steady)
	warmByRule bool // a warm-up instance by the rule (Steady.InWarmupByRule)
}

// prefillSpans is each thread's prefill instances (Spans), in start
// order: the outermost push/pop ranges of domain whose stage is the
// prefill.
func prefillSpans(p *timeline.Process, spans map[*timeline.Range]Span, steady *Steady, domain string, names model.Names) map[int64][]prefill {
	out := map[int64][]prefill{}
	for _, r := range p.Ranges {
		if r.Kind == timeline.PushPop && r.Closed && r.Domain == domain && r.Parent == nil && names.Of(r.Label(), "") == model.Prefill {
			out[r.Thread] = append(out[r.Thread], prefill{spans[r], r.Inferred, steady.InWarmup(r), steady.InWarmupByRule(r)})
		}
	}
	for _, ps := range out {
		slices.SortStableFunc(ps, func(a, b prefill) int { return cmp.Compare(a.span.Start, b.span.Start) })
	}
	return out
}

// lastIndexBefore is the index of the last prefill of ps starting in
// (after, before].
func lastIndexBefore(ps []prefill, after, before int64) (int, bool) {
	i, _ := slices.BinarySearchFunc(ps, before, func(p prefill, t int64) int { return cmp.Compare(p.span.Start, t+1) })
	if i == 0 || ps[i-1].span.Start <= after {
		return 0, false
	}
	return i - 1, true
}

// lastBefore is the last of sorted ts in (after, before].
func lastBefore(ts []int64, after, before int64) (int64, bool) {
	i, _ := slices.BinarySearchFunc(ts, before, func(a, b int64) int { return cmp.Compare(a, b+1) })
	if i == 0 || ts[i-1] <= after {
		return 0, false
	}
	return ts[i-1], true
}
