// A stage's GPU work, apart from its wall time: what tells a change of the
// program's GPU work from a change of the host that launches it (see the
// package documentation, "Host or GPU").

package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// The sources of a stage's work (facts.StageWork.From).
const (
	WorkFromPhases  = "phases"
	WorkFromRegions = "regions"
)

// summaryWork is what of summary.json the work and the spreads are read
// from.
type summaryWork struct {
	Phases  facts.Phases   `json:"phases"`
	Regions *facts.Regions `json:"regions"`
	Kernels struct {
		Rows []facts.KernelRow `json:"rows"`
	} `json:"kernels"`
}

// readWork takes each stage's GPU work from summary.json's phase rows
// (a timeline's, per steady-state instance) or, without them, from its
// regions when they count every launch; and each listed kernel's spread
// from its kernel rows where kernels.json had none. Stages must be read.
func (s *Summary) readWork(data []byte, name string) error {
	var doc summaryWork
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, r := range doc.Kernels.Rows {
		if r.Spread == nil {
			continue
		}
		// summary.json's rows name no device: the kernels.json row of
		// the same name, calls and total is the one.
		for _, k := range s.Kernels {
			key := kernelKey{k.Name, k.Device}
			if _, ok := s.Spreads[key]; ok || k.Name != r.Name || k.Calls != r.Calls || math.Abs(k.TotalMS-r.TotalMS) > 1e-6 {
				continue
			}
			if s.Spreads == nil {
				s.Spreads = map[kernelKey]model.Spread{}
			}
			s.Spreads[key] = *r.Spread
			break
		}
	}
	var regions []facts.RegionRow
	if doc.Regions != nil && !doc.Regions.Sampled {
		regions = doc.Regions.Rows
	}
	for _, st := range s.Stages {
		if w, ok := stageWork(st, doc.Phases, regions); ok {
			if s.Work == nil {
				s.Work = map[string]facts.StageWork{}
			}
			s.Work[st.Name] = w
		}
	}
	return nil
}

// matchRange is the one range of names that stands for stage: the range
// of its name, else the one whose last level is its name, else the one
// top-level range of its phase (model.DefaultPhases: stage "decode" is
// range "decode_all"). "" when none or several.
func matchRange(stage string, names []string) string {
	one := func(ok func(n string) bool) (string, bool) {
		var found []string
		for _, n := range names {
			if ok(n) && !slices.Contains(found, n) {
				found = append(found, n)
			}
		}
		return strings.Join(found, ""), len(found) == 1
	}
	if n, ok := one(func(n string) bool { return n == stage }); ok {
		return n
	}
	if n, ok := one(func(n string) bool { return path.Base(n) == stage }); ok {
		return n
	}
	ph := model.DefaultPhases.Of(stage, "")
	if ph == "" {
		return ""
	}
	n, _ := one(func(n string) bool { return !strings.Contains(n, "/") && model.DefaultPhases.Of(n, "") == ph })
	return n
}

// stageWork is a stage's GPU work: from its phase rows (summed over the
// processes and devices that ran it, each per its own instances), else from
// its region's totals. ok is false when neither has the stage.
func stageWork(st model.StageTimes, phases facts.Phases, regions []facts.RegionRow) (facts.StageWork, bool) {
	var names []string
	for _, r := range phases.Rows {
		if r.Phase != "" {
			names = append(names, r.Phase)
		}
	}
	if rng := matchRange(st.Name, names); rng != "" {
		w := facts.StageWork{From: WorkFromPhases, Range: rng}
		var busy, gaps float64
		bound, idle := true, 0.0
		for _, r := range phases.Rows {
			if r.Phase != rng || r.Instances < 1 {
				continue
			}
			n := float64(r.Instances)
			w.Instances = max(w.Instances, r.Instances)
			w.KernelMS += r.KernelMS / n
			busy += r.BusyMS / n
			gaps += r.GapMS / n
			w.Launches += float64(r.Kernels) / n
			bound = bound && r.LaunchBound
			idle = max(idle, r.Idle)
		}
		if w.Instances == 0 {
			return facts.StageWork{}, false
		}
		w.KernelMS, busy, gaps = model.RoundMS(w.KernelMS), model.RoundMS(busy), model.RoundMS(gaps)
		w.Launches = roundFrac(w.Launches)
		w.BusyMS, w.GapMS = &busy, &gaps
		if w.Launches > 0 && st.N > 0 {
			per := roundFrac(1000 * st.MeanMS / w.Launches)
			w.HostUSPerLaunch = &per
		}
		w.LaunchBound = &bound
		share := phases.LaunchBoundIdleShare
		if bound {
			w.BoundWhy = fmt.Sprintf("launch-bound: the GPU is idle for more than %s of the phase's wall, between its own launches (summary.json's phases)", model.ShareText(share))
		} else {
			w.BoundWhy = fmt.Sprintf("GPU-bound: the GPU is idle for no more than %s of the phase's wall (summary.json's phases; %s at most)", model.ShareText(share), model.ShareText(roundFrac(idle)))
		}
		return w, true
	}
	names = names[:0]
	for _, r := range regions {
		names = append(names, r.Name)
	}
	rng := matchRange(st.Name, names)
	if rng == "" {
		return facts.StageWork{}, false
	}
	i := slices.IndexFunc(regions, func(r facts.RegionRow) bool { return r.Name == rng })
	r := regions[i]
	w := facts.StageWork{From: WorkFromRegions, Range: rng, KernelMS: r.TotalMS, Launches: float64(r.Launches)}
	// A pass's kernel time is at least one instance's, and the GPU is busy
	// at most its kernel time: kernels of a whole pass that fill at most
	// half of one instance's wall leave the GPU idle for at least half of
	// it.
	if st.N > 0 && st.MeanMS > 0 {
		fill := roundFrac(r.TotalMS / st.MeanMS)
		if r.TotalMS <= (1-LaunchBoundIdleShare)*st.MeanMS {
			bound := true
			w.LaunchBound = &bound
			w.BoundWhy = fmt.Sprintf("launch-bound: the kernels of region %s over a whole pass sum to %s of one instance's wall (%s ms): the GPU is idle for at least the rest",
				shown(rng), model.ShareText(fill), model.FormatMS(st.MeanMS))
		} else {
			w.BoundWhy = fmt.Sprintf("unknown: the kernels of region %s over a whole pass sum to %s of one instance's wall; without a timeline's busy time the bound is not known",
				shown(rng), model.ShareText(fill))
		}
	}
	return w, true
}

// LaunchBoundIdleShare is the idle share over which a stage is launch-bound
// when its region's totals say so (the timeline's phase rows carry their
// own, summary.json's phases.launch_bound_idle_share).
const LaunchBoundIdleShare = 0.5

// compareWork compares a stage's GPU work: per instance for phase rows, as
// totals for regions (a pass each). The verdict is a regression when the
// kernel time, busy time or launches grew beyond threshold th, an
// improvement when one fell beyond it and none grew.
func compareWork(a, b facts.StageWork, th float64) *facts.DiffWork {
	d := &facts.DiffWork{A: a, B: b, Verdict: facts.Unchanged}
	pct := func(x, y float64) *float64 {
		if x == 0 {
			return nil
		}
		p := roundFrac(100 * (y - x) / x)
		return &p
	}
	worse, better := false, false
	judgeOne := func(x, y float64) *float64 {
		p := pct(x, y)
		if p != nil && math.Abs(y-x) > th*x {
			worse, better = worse || y > x, better || y < x
		}
		return p
	}
	d.KernelPct = judgeOne(a.KernelMS, b.KernelMS)
	if a.BusyMS != nil && b.BusyMS != nil {
		d.BusyPct = judgeOne(*a.BusyMS, *b.BusyMS)
	}
	d.LaunchesPct = judgeOne(a.Launches, b.Launches)
	switch {
	case worse:
		d.Verdict = facts.Regression
	case better:
		d.Verdict = facts.Improvement
	}
	return d
}

// comparable says whether two runs' work figures measure one thing: both
// per instance (phase rows) or both a pass's totals (regions).
func comparable(a, b facts.StageWork) bool { return a.From == b.From }
