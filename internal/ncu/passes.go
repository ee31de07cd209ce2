package ncu

import (
	"slices"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// SecondsPerPass is what one replay pass of one profiled launch costs in a
// session, ncu's save and restore of device memory included: the plan's
// expected time is launches x passes x SecondsPerPass.
const SecondsPerPass = 0.065

// What following a program costs ncu before the launches it profiles
// (docs/measurements.md): its own start, and, for each kernel launch the
// program makes up to the last profiled one, matching the filters. The
// program's own time up to there is paid as well.
const (
	StartSeconds             = 6.0
	SecondsPerFollowedLaunch = 0.0008
)

// FollowSeconds is what ncu costs before the last profiled launch when
// that launch lies launches launches and ns nanoseconds into its process.
func FollowSeconds(launches int, ns int64) float64 {
	return StartSeconds + float64(ns)/1e9 + float64(launches)*SecondsPerFollowedLaunch
}

// basicSections are the sections of ncu's basic set.
var basicSections = []string{"LaunchStats", "Occupancy", "SpeedOfLight", "WorkloadDistribution"}

// PassesPerLaunch is how many replay passes ncu takes to profile one launch
// with the given --set, --section and --metrics, where deepprof has
// measured it, else 0 (unknown: ncu prints the count as it profiles).
//
// The SOL throughputs alone take 10 passes, and the rest of the basic set
// adds none; the roofline set takes 17, the full set 38; the kernel
// duration alone takes one (docs/measurements.md).
func PassesPerLaunch(set string, sections, metrics []string) int {
	durationOnly := !slices.ContainsFunc(metrics, func(m string) bool { return m != model.DurationMetric })
	if !durationOnly {
		return 0
	}
	inBasic := !slices.ContainsFunc(sections, func(s string) bool { return !slices.Contains(basicSections, s) })
	switch {
	case set == "basic" && inBasic:
		return 10
	case set == "" && len(sections) > 0 && inBasic && slices.Contains(sections, "SpeedOfLight"):
		return 10
	case set == "roofline" && len(sections) == 0:
		return 17
	case set == "full" && len(sections) == 0:
		return 38
	case set == "" && len(sections) == 0 && len(metrics) > 0:
		return 1
	}
	return 0
}
