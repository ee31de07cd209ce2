package session

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// The library's deep metrics in the recorded run (docs/sessions.md, "The
// deep metrics in the recorded run").
const (
	// EnvMetrics names the metrics the library measures in the recorded
	// run, comma-separated; unset, it measures none.
	EnvMetrics = "DEEPPROF_CUPTI_METRICS"
	// EnvMetricsKernels is the most launch configurations it measures.
	EnvMetricsKernels = "DEEPPROF_CUPTI_METRICS_KERNELS"
	// EnvMetricsCoverage is the percent of the GPU time so far the
	// configurations it chooses cover.
	EnvMetricsCoverage = "DEEPPROF_CUPTI_METRICS_COVERAGE"
	// EnvMetricsShare caps the measuring's time: at most this percent of
	// the program's own time so far (after a first 1.5 s).
	EnvMetricsShare = "DEEPPROF_CUPTI_METRICS_SHARE"
	// MeasuringShare is the cap a session asks (EnvMetricsShare): with the
	// recording's own cost, a session within 1.5x of a program of 10 s or
	// more (docs/measurements.md).
	MeasuringShare = 20
)

// deepInRun reports whether the CUPTI run measures the deep metrics
// itself (ncu.deep_source library or both). In a workload of several ranks
// each rank measures its own launches, a collective never (its replay would
// wait for the other ranks). A measured launch first synchronizes its
// context, which waits for every collective its rank has queued, and each
// ends once the other ranks launch theirs: ranks that wait on each other
// outside CUDA after an asynchronous collective (a host-side send) would
// wait until workload.timeout; ncu.deep_source=ncu measures them apart.
func (s *Session) deepInRun() bool {
	return s.Cfg.NCU.DeepSource != config.DeepSourceNcu
}

// deepPassWhen is the plan's line of when ncu's deep pass runs, by
// ncu.deep_source and the timeline chosen.
func (s *Session) deepPassWhen() string {
	src := s.Cfg.NCU.DeepSource
	switch {
	case src == config.DeepSourceNcu:
		return "ncu.deep_source=ncu: ncu's pass measures the deep metrics (the program started again)"
	case s.tl == nil || s.tl.tool != timelineCupti:
		tool := "an ncu timing pass"
		if s.tl != nil && s.tl.tool == timelineNsys {
			tool = "nsys's"
		}
		return fmt.Sprintf("ncu.deep_source=%s: ncu's pass measures the deep metrics here: the timeline is %s, and deepprof's library measures them only in the CUPTI run (timeline.tool=cupti)", src, tool)
	case src == config.DeepSourceBoth:
		return "ncu.deep_source=both: runs beside the library's measurements in the CUPTI run; the summary takes ncu's"
	}
	return "ncu.deep_source=library: runs only where the CUPTI run's library measured no launch (the manifest says why); otherwise skipped"
}

// roofline reports whether the deep pass's preset asks for the roofline's
// counters.
func (s *Session) roofline() bool {
	return s.Cfg.NCU.Preset == "roofline" || s.Cfg.NCU.Preset == "full"
}

// inRunEnv is the environment that has the CUPTI run measure the deep
// metrics, and the plan's line about it.
func (s *Session) inRunEnv() ([]string, string) {
	metrics := kernels.LibraryMetrics(s.roofline())
	cov := int(s.Cfg.Timeline.Coverage*100 + 0.5)
	env := []string{
		EnvMetrics + "=" + strings.Join(metrics, ","),
		EnvMetricsKernels + "=" + strconv.Itoa(s.Cfg.NCU.MaxLaunches),
		EnvMetricsCoverage + "=" + strconv.Itoa(cov),
		EnvMetricsShare + "=" + strconv.Itoa(MeasuringShare),
	}
	line := fmt.Sprintf("the deep metrics are measured in this run (ncu.deep_source=%s): CUPTI's range profiler replays one launch of each of the launch configurations that cover %d%% of the GPU time so far, those of most time first, at most %d (ncu.max_launches), %d metrics, the measuring's time at most %d%% of the program's own (after a first 1.5 s); that time is cut out of the timeline",
		s.Cfg.NCU.DeepSource, cov, s.Cfg.NCU.MaxLaunches, len(metrics), MeasuringShare)
	return env, line
}

// The keys of the library's notes about its measuring: why it measures
// nothing (more) in its process; when its time reached its cap (the
// measuring at most DEEPPROF_CUPTI_METRICS_SHARE percent of the program's
// own time); how many targets were left unmeasured; that its records were
// held back (kernels launched from several threads or contexts).
const (
	NoteMetricsStopped = "metrics_stopped"
	NoteMetricsCapped  = "metrics_capped"
	NoteMetricsLeft    = "metrics_left"
	NoteMetricsHeld    = "metrics_held"
)

// measuredInRun is how many launches the library measured in tl (with
// metrics, of a kernel the records name), the measuring's host time, when
// none, why (its processes' NoteMetricsStopped notes), and what limited
// it: its cap, the targets it left, its records held back.
func measuredInRun(tl *timeline.Timeline) (n int, cut time.Duration, why, limits string) {
	var whys, lims []string
	for _, p := range tl.Processes {
		for _, m := range p.Measured {
			if m.Named() {
				n++
			}
		}
		cut += time.Duration(p.CutNS())
		for _, note := range p.Notes {
			switch note.Key {
			case NoteMetricsStopped:
				whys = append(whys, p.File+": "+note.Value)
			case NoteMetricsCapped:
				lims = append(lims, p.File+": its cost cap: "+note.Value)
			case NoteMetricsLeft:
				lims = append(lims, p.File+": "+note.Value+" target(s) left unmeasured")
			case NoteMetricsHeld:
				lims = append(lims, p.File+": "+note.Value)
			}
		}
	}
	if n == 0 && len(whys) == 0 {
		whys = append(whys, "the records hold no measurement and no note of the library's about one")
	}
	return n, cut, strings.Join(whys, "; "), strings.Join(lims, "; ")
}

// deepDoneInRun reports whether the CUPTI run measured the deep metrics,
// so that ncu's pass is not needed (ncu.deep_source library), saying so in
// the manifest; where it measured none, the note says why and ncu's pass
// runs.
func (s *Session) deepDoneInRun(run *rundir.Run) bool {
	if s.tl.tool != timelineCupti || !s.deepInRun() {
		return false
	}
	tl, err := s.recordsOf(run)
	if err != nil {
		return false
	}
	n, cut, why, limits := measuredInRun(tl)
	if n == 0 {
		run.Note("deep pass: the CUPTI run measured no launch (%s): ncu's pass runs instead", why)
		return false
	}
	if limits != "" {
		limits = "; " + limits
	}
	run.Note("deep pass: made in the recorded run by deepprof's CUPTI library: %d launch(es) measured with CUPTI's range profiler, %s of host time, cut out of the timeline (ncu.deep_source=%s)%s",
		n, cut.Round(time.Millisecond), s.Cfg.NCU.DeepSource, limits)
	if s.Cfg.NCU.DeepSource == config.DeepSourceBoth {
		return false
	}
	why = "the deep metrics were measured in the recorded run (ncu.deep_source=library): no ncu pass"
	for _, rel := range []string{rundir.NcuDeepReport, rundir.NcuRaw, rundir.NcuDetails} {
		run.Record(rel, rundir.StatusSkipped, why)
	}
	s.logf("%s: skipped: %s", StepNcuDeep, why)
	return true
}
