package session

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// deepTargets is the deep pass planned from a CUPTI timeline: the top
// kernels by their exact (mangled) names, within the launch budget
// (ncu.max_launches), and the launches ncu will profile of them.
type deepTargets struct {
	mangled []string
	// launches is what ncu profiles: each launch configuration of each
	// target, per launch count (--filter-mode per-launch-config). Once
	// that many are profiled the program is stopped (Step.StopAfter).
	launches  int
	perLaunch int // ncu's --launch-count: launches of each configuration
	kernels   int // the top kernels (by name) they are
	configs   int
	share     float64  // of the timed GPU time: what the targets ran
	left      []string // top kernels the budget left out
	names     []string // the top kernels profiled
	budget    int
	passes    int // ncu's replay passes a launch (ncu.PassesPerLaunch); 0: unknown
	// invocation, when not 0, is the one launch of each target profiled:
	// its invocation-th (ncu's --kernel-id), not every configuration. See
	// oneEach.
	invocation int
	// sampled is the share of the targets' time that the configurations
	// of their invocation-th launches ran, by the timeline; allConfigs is
	// the launches every configuration would have taken.
	sampled    float64
	allConfigs int
	// missed are top kernels not profiled: the invocation-th launch of
	// one of their mangled names was not made, or has a configuration none
	// of theirs in the profiled ranges has.
	missed []string
	// inside is how many of the launches are in the profiled ranges (the
	// others are of the same kernel and configuration, outside them).
	inside int
	// reach is how far into the program the last launch profiled lies
	// (one launch of each, invocation > 0), of candidates invocations
	// weighed.
	reach      phases.Reach
	candidates int
	// ranks is true for the ranks of a multi-GPU workload, each profiled
	// in a run of its own: ncu writes to its log, not to the session, and
	// the program is not stopped early (it would stop every rank).
	ranks bool
	// within says the profiled scope is one ncu cannot filter on (phases
	// inferred from the kernel stream): a launch profiled is one inside it
	// only by its invocation; outside is how many launch configurations a
	// pass of every configuration profiles outside it (their first launch
	// lies there; -1: not known).
	within  bool
	outside int
	// outsideLeft are top kernels left out where the launches are not
	// counted: a configuration of theirs was first launched outside the
	// scope (planWithin).
	outsideLeft []string
}

// planTargets chooses the deep pass's targets among the top kernels (top,
// by time, most first): each kernel, with all its mangled names and their
// launch configurations, if the launches it takes fit in what is left of
// the budget (a kernel that does not fit is left out, and the next ones are
// tried); the first kernel always. totalMS is the timed GPU time the share
// is of. ranks plans each rank of a multi-GPU workload (deepTargets.ranks).
// Where that leaves top kernels out and one is true, one launch of each
// kernel is planned instead if it gives more of them a bound (oneEach).
//
// Each configuration of an exact target is one kernel, one launch enough
// to measure it: ncu.per_kernel_launches (which samples the
// instantiations a function filter lumps together) does not apply, and an
// explicit ncu.launch_count asks for more.
//
// within says the scope of ts (phases.TargetsWithin) is one ncu cannot
// filter on (planWithin).
func planTargets(top []model.KernelStats, totalMS float64, ts []phases.Target, c config.NCU, ranks, one, within bool) *deepTargets {
	if within {
		return planWithin(top, totalMS, ts, c, ranks, one)
	}
	all := everyConfig(top, totalMS, ts, c, ranks)
	if all == nil || len(all.left) == 0 || !one || c.LaunchCount > 0 || c.LaunchSkip > 0 {
		return all
	}
	if o := oneEach(top, totalMS, ts, c); o != nil && (o.share > all.share || o.share == all.share && o.launches < all.launches) {
		o.allConfigs = all.launches
		for _, n := range all.left {
			o.allConfigs += configsOf(n, ts)
		}
		return o
	}
	return all
}

// planWithin is planTargets where the scope of ts is one ncu cannot filter
// on (phases inferred from the kernel stream: the program pushed no
// range), so that a launch it profiles is inside the scope only by being
// chosen so: a pass of every configuration profiles each one's first
// launch, wherever it lies, and one launch of each names its launch by
// invocation. Every configuration where each one's first launch is inside
// the scope, else one launch of each (oneEach, its candidates inside the
// scope), as planTargets weighs them; where one launch of each cannot be
// planned (launches not counted, one false, an explicit launch count or
// skip), every configuration of the top kernels whose configurations were
// all first launched inside, the others left out; where that leaves none,
// every configuration of them all, its launches outside the scope said.
func planWithin(top []model.KernelStats, totalMS float64, ts []phases.Target, c config.NCU, ranks, one bool) *deepTargets {
	all := everyConfig(top, totalMS, ts, c, ranks)
	if all == nil {
		return nil
	}
	all.within, all.outside = true, firstOutside(all.names, ts)
	if all.outside == 0 && (len(all.left) == 0 || !one || c.LaunchCount > 0 || c.LaunchSkip > 0) {
		return all
	}
	if one && c.LaunchCount == 0 && c.LaunchSkip == 0 {
		if o := oneEach(top, totalMS, ts, c); o != nil && (all.outside != 0 || o.share > all.share || o.share == all.share && o.launches < all.launches) {
			o.within, o.outside = true, all.outside
			o.allConfigs = all.launches
			for _, n := range all.left {
				o.allConfigs += configsOf(n, ts)
			}
			return o
		}
	}
	if all.outside == 0 {
		return all
	}
	// The kernels each of whose mangled names was first launched inside
	// the scope in every configuration.
	var out []string
	for _, t := range ts {
		if t.FirstOutside != 0 && !slices.Contains(out, t.Name) {
			out = append(out, t.Name)
		}
	}
	var inside []phases.Target
	for _, t := range ts {
		if !slices.Contains(out, t.Name) {
			inside = append(inside, t)
		}
	}
	d := everyConfig(top, totalMS, inside, c, ranks)
	if d == nil {
		return all
	}
	d.within = true
	for _, k := range top {
		if slices.Contains(out, k.Name) && !slices.Contains(d.outsideLeft, k.Name) {
			d.outsideLeft = append(d.outsideLeft, k.Name)
		}
	}
	return d
}

func everyConfig(top []model.KernelStats, totalMS float64, ts []phases.Target, c config.NCU, ranks bool) *deepTargets {
	per := 1
	if c.LaunchCount > 0 {
		per = c.LaunchCount
	}
	byName := targetsByName(ts)
	// none in the profiled ranges (an NVTX filter) or no mangled name: 0
	fit := withinBudget(top, c.MaxLaunches, func(name string) int { return configsOf(name, byName[name]) * per })
	if len(fit.names) == 0 {
		return nil
	}
	d := &deepTargets{perLaunch: per, budget: c.MaxLaunches, passes: ncu.PassesPerLaunch(c.Set, c.Sections, c.Metrics), ranks: ranks,
		names: fit.names, kernels: len(fit.names), left: fit.left, launches: fit.cost}
	ms := 0.0
	for _, name := range fit.names {
		for _, t := range byName[name] {
			d.mangled = append(d.mangled, t.Mangled)
			d.configs += t.Configs
		}
		ms += fit.ms[name]
	}
	if totalMS > 0 {
		d.share = ms / totalMS
	}
	return d
}

// firstOutside is how many launch configurations of the targets of names
// have their first launch outside the targets' scope
// (phases.Target.FirstOutside); -1 where one's is not known.
func firstOutside(names []string, ts []phases.Target) int {
	n := 0
	for _, t := range ts {
		if !slices.Contains(names, t.Name) {
			continue
		}
		if t.FirstOutside < 0 {
			return -1
		}
		n += t.FirstOutside
	}
	return n
}

func targetsByName(ts []phases.Target) map[string][]phases.Target {
	byName := map[string][]phases.Target{}
	for _, t := range ts {
		byName[t.Name] = append(byName[t.Name], t)
	}
	return byName
}

func configsOf(name string, ts []phases.Target) int {
	n := 0
	for _, t := range ts {
		if t.Name == name {
			n += t.Configs
		}
	}
	return n
}

// fitted are the top kernels that fit in a launch budget (withinBudget).
type fitted struct {
	names []string           // by time, most first
	ms    map[string]float64 // each one's time, on every device
	left  []string           // those that did not fit
	cost  int                // the launches the names take
}

// withinBudget takes the top kernels (top, by time, most first; a name
// again is the kernel on another device) each whose cost, in launches,
// fits in what is left of budget: one that does not fit is left out and
// the next ones are tried; the first always fits; a cost of 0 is a kernel
// with nothing to profile, passed over.
func withinBudget(top []model.KernelStats, budget int, cost func(name string) int) fitted {
	f := fitted{ms: map[string]float64{}}
	seen := map[string]bool{}
	for _, k := range top {
		if seen[k.Name] {
			if _, ok := f.ms[k.Name]; ok {
				f.ms[k.Name] += k.TotalMS
			}
			continue
		}
		seen[k.Name] = true
		n := cost(k.Name)
		if n == 0 {
			continue
		}
		if len(f.names) > 0 && f.cost+n > budget {
			f.left = append(f.left, k.Name)
			continue
		}
		f.names = append(f.names, k.Name)
		f.ms[k.Name] = k.TotalMS
		f.cost += n
	}
	return f
}

// The bounds of oneEach's choice: an invocation may cover up to
// CoverageSlack less of the timed GPU time than the best, and cost up to
// ReachSlack more to reach than the soonest that does.
const (
	CoverageSlack = 0.02
	ReachSlack    = 0.25
)

// oneEach plans one launch of each mangled name of the top kernels, as
// many kernels as fit in the budget (one launch a mangled name; the first
// kernel always). ncu takes one --kernel-id, whose invocation number
// applies to every kernel it matches, so one invocation number n serves
// all, chosen among the invocations at which a target's configuration is
// first launched (a kernel launched fewer than n times is not profiled).
// ncu follows the program, matching its filters at every launch, up to
// the last launch it profiles, so the invocation is the one that covers,
// then samples, the most among those that keep the coverage (within
// CoverageSlack of the best) and are reached soon (within ReachSlack of
// the soonest of those, by ncu.FollowSeconds); then the one with the most
// launches in the profiled ranges, then the soonest. How far the program
// runs then does not depend on its length. Nil
// when a target was launched by several processes (ncu counts each one's
// invocations apart), has a name holding ':' (ncu.KernelInvocation), or
// none fits.
func oneEach(top []model.KernelStats, totalMS float64, ts []phases.Target, c config.NCU) *deepTargets {
	for _, t := range ts {
		if t.Order == nil || strings.Contains(t.Mangled, ":") {
			return nil // several processes; a name --kernel-id cannot hold
		}
	}
	byName := targetsByName(ts)
	fit := withinBudget(top, c.MaxLaunches, func(name string) int { return len(byName[name]) })
	if len(fit.names) == 0 {
		return nil
	}
	type kernel struct {
		name    string
		ms      float64
		targets []phases.Target
	}
	chosen := make([]kernel, len(fit.names))
	for i, name := range fit.names {
		chosen[i] = kernel{name, fit.ms[name], byName[name]}
	}
	left := fit.left
	// reaches reports whether t's launch inv has a configuration t ran in
	// the profiled ranges.
	reaches := func(t phases.Target, inv int) bool { return len(t.Order) >= inv && t.Order[inv-1] >= 0 }
	// score is what profiling invocation inv gives: the time of the
	// kernels whose every mangled name reaches inv (a kernel partly
	// reached is not profiled), that of the configurations it samples of
	// them, and how many of those launches are in the profiled ranges.
	score := func(inv int) (covered float64, sampled int64, inside int) {
		for _, k := range chosen {
			if !slices.ContainsFunc(k.targets, func(t phases.Target) bool { return !reaches(t, inv) }) {
				covered += k.ms
				for _, t := range k.targets {
					sampled += t.ConfigNS[t.Order[inv-1]]
					if t.Admitted[inv-1] {
						inside++
					}
				}
			}
		}
		return covered, sampled, inside
	}
	// reach is how far into the program the last launch profiled at inv
	// lies, among the kernels it covers.
	reach := func(inv int) (r phases.Reach) {
		for _, k := range chosen {
			if slices.ContainsFunc(k.targets, func(t phases.Target) bool { return !reaches(t, inv) }) {
				continue
			}
			for _, t := range k.targets {
				if inv-1 < len(t.Reach) {
					r.Launches = max(r.Launches, t.Reach[inv-1].Launches)
					r.NS = max(r.NS, t.Reach[inv-1].NS)
				}
			}
		}
		return r
	}
	var firsts []int
	for _, k := range chosen {
		for _, t := range k.targets {
			firsts = append(firsts, firstLaunches(t.Order)...)
		}
	}
	slices.Sort(firsts)
	type candidate struct {
		inv      int
		covered  float64
		sampled  int64
		inside   int
		reach    phases.Reach
		followed float64 // s, ncu.FollowSeconds
	}
	var cands []candidate
	bestCovered := 0.0
	for _, inv := range slices.Compact(firsts) {
		covered, sampled, inside := score(inv)
		if covered == 0 {
			continue
		}
		c := candidate{inv: inv, covered: covered, sampled: sampled, inside: inside, reach: reach(inv)}
		c.followed = ncu.FollowSeconds(c.reach.Launches, c.reach.NS)
		cands = append(cands, c)
		bestCovered = max(bestCovered, covered)
	}
	// The invocations that keep the coverage (within CoverageSlack of the
	// timed GPU time of the best); of those reached within ReachSlack of
	// the soonest, the one that covers, then samples, the most.
	soonest := -1.0
	for i := range cands {
		if c := &cands[i]; c.covered >= bestCovered-CoverageSlack*totalMS && (soonest < 0 || c.followed < soonest) {
			soonest = c.followed
		}
	}
	var pick *candidate
	for i := range cands {
		c := &cands[i]
		if c.covered < bestCovered-CoverageSlack*totalMS || c.followed > soonest*(1+ReachSlack) {
			continue
		}
		if pick == nil || c.covered > pick.covered || c.covered == pick.covered && (c.sampled > pick.sampled ||
			c.sampled == pick.sampled && (c.inside > pick.inside || c.inside == pick.inside && c.followed < pick.followed)) {
			pick = c
		}
	}
	best, bestSampled, bestInside := 0, int64(0), 0
	if pick != nil {
		best, bestSampled, bestInside = pick.inv, pick.sampled, pick.inside
	}
	if best == 0 {
		return nil // no launch of a configuration run in the ranges
	}
	d := &deepTargets{perLaunch: 1, budget: c.MaxLaunches, passes: ncu.PassesPerLaunch(c.Set, c.Sections, c.Metrics), invocation: best, left: left, inside: bestInside,
		reach: pick.reach, candidates: len(cands)}
	var targetNS int64
	ms := 0.0
	for _, k := range chosen {
		if slices.ContainsFunc(k.targets, func(t phases.Target) bool { return !reaches(t, best) }) {
			d.missed = append(d.missed, k.name)
			continue
		}
		for _, t := range k.targets {
			targetNS += t.NS
			d.mangled = append(d.mangled, t.Mangled)
			d.configs++
		}
		d.kernels++
		d.names = append(d.names, k.name)
		ms += k.ms
	}
	d.launches = d.configs
	if totalMS > 0 {
		d.share = ms / totalMS
	}
	if targetNS > 0 {
		d.sampled = float64(bestSampled) / float64(targetNS)
	}
	return d
}

// firstLaunches are the invocation numbers (from 1) at which order (a
// phases.Target's) has a configuration for the first time.
func firstLaunches(order []int32) []int {
	var out []int
	next := int32(0) // Order numbers configurations by first launch
	for i, c := range order {
		if c == next { // -1, outside the ranges, never is
			out = append(out, i+1)
			next++
		}
	}
	return out
}

// note says what the deep pass profiles and why, for the plan and the
// manifest.
func (d *deepTargets) note() string {
	var b strings.Builder
	stop := fmt.Sprintf("the program is stopped once the %d launches are profiled", d.launches)
	if d.ranks {
		stop = "each profiled rank's, in its own run; the program runs to its end (stopping it would stop every rank)"
	}
	if d.invocation > 0 {
		stop = fmt.Sprintf("ncu ends the program once the %d launches are profiled (--launch-count %d --kill 1)", d.launches, d.launches)
		every := fmt.Sprintf("every configuration would take %d launches, over ncu.max_launches=%d", d.allConfigs, d.budget)
		switch {
		case d.within && d.outside > 0 && d.allConfigs <= d.budget:
			every = fmt.Sprintf("every configuration would take %d launches, within ncu.max_launches=%d, but ncu would profile each one's first launch, and %d of those are outside the phases inferred from the kernel stream", d.allConfigs, d.budget, d.outside)
		case d.within && d.outside < 0 && d.allConfigs <= d.budget:
			every = fmt.Sprintf("every configuration would take %d launches, within ncu.max_launches=%d, but ncu would profile each one's first launch, which may lie outside the phases inferred from the kernel stream", d.allConfigs, d.budget)
		}
		fmt.Fprintf(&b, "deep pass on the top %d kernel(s) by exact name (%d mangled name(s)): one launch of each, its invocation %d (ncu --kernel-id takes one invocation number for all), whose launch configurations ran %.1f%% of their time; %s; %d launch(es) (%s); they ran %.1f%% of the timed GPU time; %s",
			d.kernels, len(d.mangled), d.invocation, 100*d.sampled, every, d.launches, expectedCost(d.launches, d.passes), 100*d.share, stop)
		fmt.Fprintf(&b, "; of %d invocation(s) weighed, one reached soon: ncu follows the program to its launch %d, %.1f s in (about %.0f s before the last profiled launch: %.1f ms a launch followed, and ncu's start of %.0f s)",
			d.candidates, d.reach.Launches+1, float64(d.reach.NS)/1e9, ncu.FollowSeconds(d.reach.Launches, d.reach.NS), 1e3*ncu.SecondsPerFollowedLaunch, ncu.StartSeconds)
		if d.within {
			fmt.Fprintf(&b, "; each a launch inside the phases inferred from the kernel stream, on which ncu cannot filter (the program pushed no range): its invocation number names it")
		} else if d.inside < d.launches {
			fmt.Fprintf(&b, "; %d of the %d launches are in the profiled NVTX ranges, the others of the same kernel and launch configuration outside them (a warm-up's)", d.inside, d.launches)
		}
		if len(d.missed) > 0 {
			fmt.Fprintf(&b, "; %d top kernel(s) not profiled: their invocation %d was not made, or ran in a launch configuration they did not run in the profiled ranges", len(d.missed), d.invocation)
		}
	} else {
		fmt.Fprintf(&b, "deep pass on the top %d kernel(s) by exact name (%d mangled name(s)): %d launch(es), %d of each of their %d launch configuration(s), within ncu.max_launches=%d (%s); they ran %.1f%% of the timed GPU time; %s",
			d.kernels, len(d.mangled), d.launches, d.perLaunch, d.configs, d.budget, expectedCost(d.launches, d.passes), 100*d.share, stop)
		switch {
		case d.within && d.outside == 0 && len(d.outsideLeft) > 0:
			fmt.Fprintf(&b, "; each configuration's first launch, which ncu profiles, is inside the phases inferred from the kernel stream; %d top kernel(s) left out: ncu cannot filter on those phases (the program pushed no range), their launch configurations were first launched outside them (a compiler's autotuning, the model's build), where ncu would profile them, and one launch of each, named by its invocation inside them, is not planned here (the records do not count the launches as ncu does: CUDA graph launches, dropped records, several processes; or the ranks of a multi-GPU workload, ncu.launch_count or ncu.launch_skip)", len(d.outsideLeft))
		case d.within && d.outside == 0:
			b.WriteString("; each configuration's first launch, which ncu profiles, is inside the phases inferred from the kernel stream")
		case d.within && d.outside < 0:
			b.WriteString("; ncu cannot filter on the phases inferred from the kernel stream (the program pushed no range), and each configuration's first launch, which it profiles, may lie outside them")
		case d.within:
			fmt.Fprintf(&b, "; ncu cannot filter on the phases inferred from the kernel stream (the program pushed no range): %d launch configuration(s) are first launched outside them, and those launches are the ones it profiles", d.outside)
		}
	}
	if len(d.left) > 0 {
		fmt.Fprintf(&b, "; %d further top kernel(s) left out by the budget (raise ncu.max_launches to include them)", len(d.left))
	}
	return b.String()
}

// estimate is the deep pass's expected time in seconds: ncu following the
// program to its last profiled launch (one launch of each), and the
// profiling; 0 when the passes a launch are not known.
func (d *deepTargets) estimate() float64 {
	if d.passes <= 0 {
		return 0
	}
	e := float64(d.launches*d.passes) * ncu.SecondsPerPass
	if d.invocation > 0 {
		e += ncu.FollowSeconds(d.reach.Launches, d.reach.NS)
	}
	return e
}

// expectedCost says what profiling n launches of passes replay passes each
// costs (passes 0: not known before ncu runs).
func expectedCost(n, passes int) string {
	if passes <= 0 {
		return fmt.Sprintf("ncu's passes a launch for these sections and metrics are not known before it runs; %.0f s or more of profiling at %.3f s a pass", float64(n)*ncu.SecondsPerPass, ncu.SecondsPerPass)
	}
	return fmt.Sprintf("%d pass(es) a launch: about %.0f s of profiling at %.3f s a pass", passes, float64(n*passes)*ncu.SecondsPerPass, ncu.SecondsPerPass)
}

// plannedStop reads what ncu prints while it profiles and calls stop once
// want launches are profiled (their progress lines reached "100% - N
// passes").
type plannedStop struct {
	want int
	stop func()
	// grace, when not 0, delays stop by that much (ncu ends the program
	// itself: Step.NcuKills); close cancels what is pending.
	grace time.Duration
	timer *time.Timer

	mu   sync.Mutex
	line []byte
	done int
	hit  bool
	// fewest and most are the fewest and most replay passes a profiled
	// launch took.
	fewest, most int
}

func (p *plannedStop) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(p.line) < maxProgressLine {
				p.line = append(p.line, b[:min(len(b), maxProgressLine-len(p.line))]...)
			}
			break
		}
		p.line = append(p.line, b[:i]...)
		if ev, ok := ncu.ParseProgress(string(p.line)); ok && ev.Kind == ncu.ProgressKernel && ev.Done {
			p.done++
			if p.done == 1 || ev.Passes < p.fewest {
				p.fewest = ev.Passes
			}
			p.most = max(p.most, ev.Passes)
			if p.done >= p.want && !p.hit {
				p.hit = true
				if p.grace > 0 {
					p.timer = time.AfterFunc(p.grace, p.stop)
				} else {
					p.stop()
				}
			}
		}
		p.line = p.line[:0]
		b = b[i+1:]
	}
	return n, nil
}

// close cancels a stop still waiting for its grace.
func (p *plannedStop) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
	}
}

// fired reports whether the planned launches were all profiled.
func (p *plannedStop) fired() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hit
}

// passes says the replay passes the profiled launches took, as ncu
// printed them.
func (p *plannedStop) passes() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done == 0:
		return "no launch profiled"
	case p.fewest == p.most:
		return fmt.Sprintf("%d pass(es) a launch", p.most)
	}
	return fmt.Sprintf("%d to %d passes a launch", p.fewest, p.most)
}

// maxProgressLine bounds a line kept while plannedStop waits for its end:
// ncu's progress lines are short, a program's own output may not be.
const maxProgressLine = 64 << 10
