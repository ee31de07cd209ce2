package phases

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// The ranges InferPhases gives a process: the names the automatic ranges
// of a PyTorch program have (package session's sitecustomize), so that
// phases.* and nvtx.include name them alike.
const (
	InferredPrefill = "prefill"
	InferredDecode  = "decode_all"
	InferredStep    = "decode_step"
)

// The bounds of InferPhases: a decode loop is MinInferredSteps steps or
// more of MinStepLaunches launches or more (a forward pass of a model),
// each launch at least MinPeriodMatch of the time the same kernel
// as the launch one step later, its period holding MinPeriodCover of the
// launches the best period holds; the pass before it is the prefill when
// its kernels' blocks are at least PrefillGridFactor times a step's.
const (
	MinInferredSteps  = 3
	MinStepLaunches   = 8
	MinPeriodMatch    = 0.9
	MinPeriodCover    = 0.8
	PrefillGridFactor = 1.5
)

// InferPhases gives each process that launched kernels but opened no
// push/pop range of domain the phases of a decoder's generate loop, found
// in its kernel stream: on the thread that launched the most kernels, the
// decode steps are where one launch sequence repeats (each launch the
// same kernel as the launch one period later; the period is, among each
// kernel's most frequent distance between two of its launches, the
// longest whose repeats hold nearly the most launches and is no multiple
// of another), in runs of at least MinInferredSteps, each step starting
// where the host waited longest before a launch (after the previous
// token's sampling: a step is a token's forward pass and its sampling);
// the prefill is the pass of as many launches just before each run, when
// its kernels' blocks outnumber a step's (larger GEMM grids). The ranges it adds are push/pop
// ranges of domain (InferredPrefill; InferredDecode holding one
// InferredStep a step), its kernels and copies attributed to them; what
// comes before the first phase (imports, the model's build) stays outside
// every range. It returns a note a process: how its phases were found, or
// why none were; found says some were.
func InferPhases(tl *timeline.Timeline, domain string) (notes []string, found bool) {
	for _, p := range tl.Processes {
		if !inferable(p, domain) {
			continue
		}
		note, ok := inferPhases(p, domain)
		notes = append(notes, note)
		found = found || ok
	}
	return notes, found
}

// InferredRanges are the names of the outermost ranges InferPhases adds
// (a prefill, a decode): where the program opened no range to profile and
// its phases were inferred, the kernel table and the deep pass cover them,
// as they cover the ranges nvtx.include names.
func InferredRanges() []string { return []string{InferredPrefill, InferredDecode} }

// Inferred are the launches inside the phases InferPhases finds in a
// timeline, found without adding them: by process id, whether each of its
// kernels (an index into Process.Kernels, as model.Launch.ID counts them)
// is inside one. Once InferPhases has added the ranges, these are the
// launches model.InRanges admits of InferredRanges.
type Inferred map[int64][]bool

// FindInferred is Inferred of tl (InferPhases's rule, tl left as read: a
// session's query of a timeline its rebuild adds the phases to); empty
// where InferPhases finds none. A process id that two processes of tl
// share (records of several machines) has none.
func FindInferred(tl *timeline.Timeline, domain string) Inferred {
	out := Inferred{}
	pids := map[int64]int{}
	for _, p := range tl.Processes {
		pids[p.Header.PID]++
	}
	for _, p := range tl.Processes {
		if pids[p.Header.PID] > 1 || !inferable(p, domain) {
			continue
		}
		f, _, ok := findPhases(p)
		if !ok {
			continue
		}
		in := make([]bool, len(p.Kernels))
		for _, r := range f.runs {
			for _, i := range f.at[r.prefill:r.end] {
				in[i] = true
			}
		}
		out[p.Header.PID] = in
	}
	return out
}

// Has reports whether l (a launch of the timeline in was found in) is
// inside an inferred phase.
func (in Inferred) Has(l *model.Launch) bool {
	p := in[l.ProcessID]
	return l.ID >= 0 && l.ID < int64(len(p)) && p[l.ID]
}

// WouldInfer reports whether InferPhases would look for phases in tl: a
// process launched kernels but opened no push/pop range of domain. Where
// it would not, InferPhases leaves tl as it is.
func WouldInfer(tl *timeline.Timeline, domain string) bool {
	return slices.ContainsFunc(tl.Processes, func(p *timeline.Process) bool { return inferable(p, domain) })
}

// inferable reports whether p launched kernels but opened no push/pop
// range of domain.
func inferable(p *timeline.Process, domain string) bool {
	return len(p.Kernels) > 0 && !slices.ContainsFunc(p.Ranges, func(r *timeline.Range) bool { return r.Kind == timeline.PushPop && r.Domain == domain })
}

// decodeRun is one stretch of repeated steps, [start, end) in the
// launch order, and the prefill before it, [prefill, start) (prefill ==
// start: none).
type decodeRun struct{ prefill, start, end int }

func inferPhases(p *timeline.Process, domain string) (string, bool) {
	f, note, ok := findPhases(p)
	if ok {
		addInferred(p, domain, f.thread, f.seq, f.period, f.runs)
	}
	return note, ok
}

// inference is what findPhases found in a process: the launches of its
// thread, in launch order, the period of its decode steps and their runs
// (each with its prefill).
type inference struct {
	thread int64
	seq    []launch
	at     []int // each launch of seq's index in the process's Kernels
	period int
	runs   []decodeRun
}

// launch is one launch of the thread phases are inferred on, with its
// function and launch call.
type launch struct {
	k   *timeline.KernelExecution
	fn  *timeline.Function
	api *timeline.API
}

// findPhases finds p's phases (InferPhases) and says how, or why there
// are none, without adding them to p.
func findPhases(p *timeline.Process) (inference, string, bool) {
	// The launches of the thread that launched the most, in launch order.
	threads := map[int64]int{}
	for i := range p.Kernels {
		if a := p.APIOf(&p.Kernels[i]); a != nil {
			threads[a.Thread]++
		}
	}
	var thread int64
	for t, n := range threads {
		if n > threads[thread] || n == threads[thread] && t < thread {
			thread = t
		}
	}
	var at []int // indexes into p.Kernels
	for i := range p.Kernels {
		if a := p.APIOf(&p.Kernels[i]); a != nil && a.Thread == thread {
			at = append(at, i)
		}
	}
	slices.SortFunc(at, func(a, b int) int { return cmp.Compare(p.Kernels[a].Correlation, p.Kernels[b].Correlation) })
	seq := make([]launch, len(at))
	for j, i := range at {
		k := &p.Kernels[i]
		seq[j] = launch{k, p.Fn(k), p.APIOf(k)}
	}
	none := func(why string) (inference, string, bool) {
		return inference{}, fmt.Sprintf("%s: no phases found in the kernel stream (%s); the whole program is its one stage: mark its phases with NVTX ranges", p.File, why), false
	}
	period, runs, why := decodeRuns(seq)
	if period == 0 {
		return none(fmt.Sprintf("on thread %d, %s", thread, why))
	}
	steps, prefills := 0, 0
	for i := range runs {
		r := &runs[i]
		steps += (r.end - r.start) / period
		if r.prefill = prefillBefore(seq, runs, i, period); r.prefill < r.start {
			prefills++
		}
	}
	if prefills == 0 {
		return none(fmt.Sprintf("a sequence of %d launches repeats %d times on thread %d, but no pass before it runs larger grids, as a prefill does: a loop, not a generate's", period, steps, thread))
	}
	how := fmt.Sprintf("%s: phases inferred from the kernel stream of thread %d, no NVTX range of its own: a sequence of %d launches repeats %d times in %d run(s) (the decode steps, %s each)",
		p.File, thread, period, steps, len(runs), InferredStep)
	how += fmt.Sprintf("; the %d launches before %d of them, whose kernels run %.1fx or more of a step's blocks (larger GEMM grids), are the prefill", period, prefills, PrefillGridFactor)
	how += "; what runs before the first phase (imports, the model's build) is outside every phase. NVTX ranges of its own make them exact"
	return inference{thread: thread, seq: seq, at: at, period: period, runs: runs}, how, true
}

// decodeRuns finds the period of the decode loop in seq and the runs of
// steps that repeat it (at least MinInferredSteps steps each), or 0 and
// why there is none.
func decodeRuns(seq []launch) (int, []decodeRun, string) {
	per, runs := loopRuns(seq, MinStepLaunches)
	if per == 0 {
		return 0, nil, fmt.Sprintf("no sequence of %d launches or more repeats %d times or more", MinStepLaunches, MinInferredSteps)
	}
	// A "step" that holds a prefill and decode steps of its own is a whole
	// generate, repeated: its steps are too alike to tell apart (no kernel
	// runs once a step).
	r := runs[0]
	if inner, innerRuns := loopRuns(seq[r.start:r.start+per], 2); inner > 0 && slices.ContainsFunc(innerRuns, func(x decodeRun) bool {
		return prefillBefore(seq[r.start:r.start+per], innerRuns, slices.Index(innerRuns, x), inner) < x.start
	}) {
		return 0, nil, fmt.Sprintf("whole generates of %d launches repeat, each a prefill and steps of %d launches, but no kernel runs once a step to tell the steps apart", per, inner)
	}
	// A step starts where its host waited the longest before launching:
	// after the previous token's sampling and its wait for the GPU, at
	// the forward pass's first launch.
	if j := stepStart(seq, runs, per); j > 0 {
		for i := range runs {
			r := &runs[i]
			r.start, r.end = r.start+j, min(len(seq), r.end+j)
			if i+1 < len(runs) {
				r.end = min(r.end, runs[i+1].start+j)
			}
		}
	}
	// A prefill that launches the kernels a step does (a mixture of
	// experts' routed GEMMs; a model whose prefill and steps run one set of
	// kernels) repeats with the steps: a step running PrefillGridFactor
	// times the blocks of the run's median step is a prefill, and ends the
	// run before it; the steps after it are a run of their own.
	var split []decodeRun
	for _, r := range runs {
		steps := (r.end - r.start) / per
		b := make([]float64, steps)
		for k := range steps {
			b[k] = blocks(seq[r.start+k*per : r.start+(k+1)*per])
		}
		med := slices.Clone(b)
		slices.Sort(med)
		from := r.start
		for k := range steps {
			if b[k] < PrefillGridFactor*med[len(med)/2] {
				continue
			}
			at := r.start + k*per
			if (at-from)/per >= MinInferredSteps {
				split = append(split, decodeRun{start: from, end: at})
			}
			from = at + per
		}
		if (r.end-from)/per >= MinInferredSteps {
			split = append(split, decodeRun{start: from, end: r.end})
		}
	}
	if len(split) == 0 {
		return 0, nil, fmt.Sprintf("a sequence of %d launches repeats, but in no run of %d steps or more between passes of larger grids", per, MinInferredSteps)
	}
	runs = split
	return per, runs, ""
}

// loopRuns is the period of at least minLaunches launches that repeats
// in seq as a decode loop does (decodeRuns), and its runs; 0 for none.
func loopRuns(seq []launch, minLaunches int) (int, []decodeRun) {
	n := len(seq)
	if n < 2*MinInferredSteps {
		return 0, nil
	}
	id := map[*timeline.Function]int{}
	names := map[string]int{}
	tok := make([]int, n)
	for i, l := range seq {
		t, ok := id[l.fn]
		if !ok {
			name := l.fn.Name()
			if t, ok = names[name]; !ok {
				t = len(names)
				names[name] = t
			}
			id[l.fn] = t
		}
		tok[i] = t
	}
	// Candidate periods: each kernel's most frequent distance between two
	// of its launches.
	last := make([]int, len(names))
	for i := range last {
		last[i] = -1
	}
	gaps := make([]map[int]int, len(names))
	for i, t := range tok {
		if last[t] >= 0 {
			if gaps[t] == nil {
				gaps[t] = map[int]int{}
			}
			gaps[t][i-last[t]]++
		}
		last[t] = i
	}
	cands := map[int]bool{}
	for _, g := range gaps {
		best, bestN := 0, 0
		for d, c := range g {
			if c > bestN || c == bestN && d < best {
				best, bestN = d, c
			}
		}
		if bestN >= MinInferredSteps-1 && best >= minLaunches {
			cands[best] = true
		}
	}
	// The period: of those whose runs hold MinPeriodCover of the most any
	// holds, the one whose runs most often follow a prefill (a pass of as
	// many launches running more blocks: prefilled), then the one holding
	// the most. A layer's launches repeat too, but its runs follow the
	// previous step's last kernels; a whole generate's repeat, but its one
	// run follows the program's start. With no prefill anywhere, the
	// longest that is no multiple of a shorter one: a step holds the layers
	// and what runs once a step (the output head, the sampling).
	type period struct {
		per, cover, prefilled int
		runs                  []decodeRun
	}
	var ps []period
	most := 0
	for _, per := range slices.Sorted(maps.Keys(cands)) {
		runs := repeats(tok, per)
		q := period{per: per, runs: runs}
		for i, r := range runs {
			q.cover += r.end - r.start
			if prefillBefore(seq, runs, i, per) < r.start {
				q.prefilled++
			}
		}
		if q.cover > 0 {
			ps = append(ps, q)
			most = max(most, q.cover)
		}
	}
	var kept []period
	for _, q := range ps {
		if float64(q.cover) >= MinPeriodCover*float64(most) {
			kept = append(kept, q)
		}
	}
	if len(kept) == 0 {
		return 0, nil
	}
	best := slices.MaxFunc(kept, func(a, b period) int {
		return cmp.Or(cmp.Compare(a.prefilled, b.prefilled), cmp.Compare(a.cover, b.cover), cmp.Compare(b.per, a.per))
	})
	if best.prefilled > 0 {
		return best.per, best.runs
	}
	for i := len(kept) - 1; i >= 0; i-- {
		if !slices.ContainsFunc(kept[:i], func(q period) bool { return kept[i].per%q.per == 0 }) {
			return kept[i].per, kept[i].runs
		}
	}
	return 0, nil
}

// prefillBefore is where the prefill before runs[i] starts: the pass of
// per launches before it (after the run before), when its kernels run
// PrefillGridFactor times the blocks of the run's first step; runs[i].start
// when there is none.
func prefillBefore(seq []launch, runs []decodeRun, i, per int) int {
	r := runs[i]
	lo := 0
	if i > 0 {
		lo = runs[i-1].end
	}
	from := max(lo, r.start-per)
	if from < r.start && blocks(seq[from:r.start]) >= PrefillGridFactor*blocks(seq[r.start:r.start+per]) {
		return from
	}
	return r.start
}

// repeats are the runs of tok in which each launch is, at least
// MinPeriodMatch of the time over a step, the same kernel as the one per
// launches later: runs of whole steps, MinInferredSteps or more.
func repeats(tok []int, per int) []decodeRun {
	n := len(tok)
	var runs []decodeRun
	for s := 0; s+per <= n; {
		// extend a run step by step while a step matches the next
		e := s
		for e+2*per <= n && stepMatches(tok, e, per) {
			e += per
		}
		if e > s {
			e += per // the last step matched by the one before
		}
		if (e-s)/per >= MinInferredSteps {
			// The pass before may end like a step (a norm, the sampling):
			// the run starts after the last launch of its first half that
			// differs from the one a step later, and ends as much later.
			d := 0
			for i := s; i < s+per/2; i++ {
				if tok[i] != tok[i+per] {
					d = i + 1 - s
				}
			}
			s, e = s+d, min(n, e+d)
			runs = append(runs, decodeRun{start: s, end: e})
			s = e
			continue
		}
		s++
	}
	return runs
}

// stepMatches says whether the step at s is, launch for launch, the same
// kernels as the next one (MinPeriodMatch of them).
func stepMatches(tok []int, s, per int) bool {
	same := 0
	for i := s; i < s+per; i++ {
		if tok[i] == tok[i+per] {
			same++
		}
	}
	return float64(same) >= MinPeriodMatch*float64(per)
}

// stepStart is the offset into its runs' steps at which the host waited
// longest before a launch call (the median over the steps of the time
// from the call before to it).
func stepStart(seq []launch, runs []decodeRun, per int) int {
	best, bestGap := 0, int64(-1)
	gaps := []int64{}
	for j := range per {
		gaps = gaps[:0]
		for _, r := range runs {
			for s := r.start + j; s < r.end; s += per {
				if s > 0 {
					gaps = append(gaps, seq[s].api.Start-seq[s-1].api.End)
				}
			}
		}
		if len(gaps) == 0 {
			continue
		}
		slices.Sort(gaps)
		if g := gaps[len(gaps)/2]; g > bestGap {
			best, bestGap = j, g
		}
	}
	return best
}

// blocks is the thread blocks the launches ran, summed.
func blocks(ks []launch) float64 {
	b := 0.0
	for _, l := range ks {
		b += float64(l.fn.Grid.X) * float64(l.fn.Grid.Y) * float64(l.fn.Grid.Z)
	}
	return b
}

// addInferred adds the ranges of runs (their launches seq[i], on thread)
// to p and attributes its kernels and copies to them.
func addInferred(p *timeline.Process, domain string, thread int64, seq []launch, period int, runs []decodeRun) {
	var leaves []*timeline.Range // prefill and steps, by start
	// A range opens at its first launch call and closes when its last
	// launch call has returned and its kernels have run: as a range pushed
	// around a forward pass and the wait for its token, with none of the
	// host's work before the next pass.
	open := func(name string, parent *timeline.Range, from, to int) *timeline.Range {
		r := &timeline.Range{Kind: timeline.PushPop, Domain: domain, Name: name, Thread: thread, EndThread: thread, Closed: true, Inferred: true, Parent: parent,
			Start: seq[from].api.Start, End: seq[min(to, len(seq))-1].api.End}
		for _, l := range seq[from:min(to, len(seq))] {
			r.End = max(r.End, l.k.End)
		}
		r.SetDepth()
		p.Ranges = append(p.Ranges, r)
		return r
	}
	for _, run := range runs {
		if run.prefill < run.start {
			r := open(InferredPrefill, nil, run.prefill, run.start)
			for _, l := range seq[run.prefill:run.start] {
				p.SetRange(l.k, r)
			}
			leaves = append(leaves, r)
		}
		all := open(InferredDecode, nil, run.start, run.end)
		for s := run.start; s < run.end; s += period {
			st := open(InferredStep, all, s, min(s+period, run.end))
			if next := s + period; next < run.end {
				// A step runs to the next step's first launch: the host's
				// work between them (sampling, the token's wait) is the
				// step's, as the program's own clock reads a token.
				st.End = max(st.End, seq[next].api.Start)
			}
			for _, l := range seq[s:min(s+period, run.end)] {
				p.SetRange(l.k, st)
			}
			leaves = append(leaves, st)
		}
	}
	slices.SortStableFunc(p.Ranges, func(x, y *timeline.Range) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Depth, y.Depth))
	})
	for i := range p.Copies {
		c := &p.Copies[i]
		if c.API == nil || c.API.Thread != thread {
			continue
		}
		j, _ := slices.BinarySearchFunc(leaves, c.API.Start, func(r *timeline.Range, t int64) int { return cmp.Compare(r.Start, t+1) })
		if j > 0 && c.API.Start < leaves[j-1].End {
			c.Range = leaves[j-1]
		}
	}
}
