package rebuild

import (
	"errors"
	"fmt"
	"time"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Config says how derived files are made.
type settings struct {
	TopN    int // kernels shown in kernels.md; 0: all
	Regions regions.Config
	Summary summary.Options // stakeholder_summary.md
	// Include are the configured NVTX ranges (nvtx.include): a CUPTI
	// timeline records the whole program, and its kernel table counts the
	// launches inside these, as the ncu passes gate on them. None: all.
	Include [][]model.Range
	// IncludeNames are nvtx.include as configured.
	IncludeNames []string
	// inferredScope says Include are the phases inferred from the kernel
	// stream (decideRanges), not ranges the program pushed.
	inferredScope bool
	// Domain is nvtx.domain: a program's stages are its ranges in it.
	Domain string
	// InferPhases (workload.auto_ranges on) gives a program that opened no
	// range of Domain the phases found in its kernel stream
	// (phases.InferPhases).
	InferPhases bool

	exports *exportReads // the rebuild's one read of each ncu export
	// read, when not nil, is the run's CUPTI timeline already read of its
	// record files (the session's): the rebuild takes it instead of
	// reading them again.
	read *timeline.Timeline
	// traced, when not nil, waits for the trace of read already begun
	// (writeTrace) and gives its error: the rebuild takes that trace
	// instead of writing it again.
	traced func() error
	// started, when not nil, is called once the rebuild has checked that
	// it may write its files and before it writes any (deepprof report
	// writes the manifest of a rebuild under way); its error stops the
	// rebuild there.
	started func() error
	// now, when not nil, stamps the manifest the rebuild writes once it
	// has committed its files (deepprof report); nil: the caller writes
	// the manifest (a session).
	now func() time.Time
}

// ConfigFor is how a run configured by cfg makes its derived files: its
// report and regions settings.
func settingsFor(cfg *config.Config) (settings, error) {
	rc, err := cfg.Regions.Config()
	if err != nil {
		return settings{}, err
	}
	r := cfg.Report
	m := cfg.Model
	opt := summary.Options{TopN: r.TopN, BoundThresholdPct: r.BoundThresholdPct, Phases: cfg.Phases,
		Facts: summary.Facts{
			Model: workload.Model{Dtype: m.Dtype, MatmulParams: int64(m.MatmulParams), Layers: int64(m.Layers),
				Heads: int64(m.Heads), HeadDim: int64(m.HeadDim)},
			Tokens: workload.Tokens{Prompt: int64(m.PromptTokens), Generated: int64(m.GeneratedTokens)},
			Batch:  int64(m.Batch),
		}}
	if len(r.Categories) > 0 {
		c, err := kernels.Parse(r.Categories)
		if err != nil {
			return settings{}, fmt.Errorf("report.categories: %w", err)
		}
		opt.Categories = c
	}
	if r.PeakTFLOPS > 0 {
		opt.PeakOverride = machine.Peak{TFLOPS: r.PeakTFLOPS, MemoryTBps: r.PeakMemoryTBps,
			Source: "the profile (report.peak_tflops, report.peak_memory_tbps)"}
	}
	inc, err := cfg.NVTX.IncludeRanges()
	if err != nil {
		return settings{}, err
	}
	return settings{TopN: r.TopN, Regions: rc, Summary: opt, Include: inc, IncludeNames: cfg.NVTX.Include, Domain: cfg.NVTX.Domain,
		InferPhases: cfg.Workload.AutoRanges != "off"}, nil
}

// sampleRegions is the deep pass's sample by region, with the configured
// metric groups.
func sampleRegions(run *rundir.Run, rec rundir.Recorded, cfg settings) (*facts.RegionReport, error) {
	if !hasDeepRaw(rec) {
		return nil, errors.New("no deep-pass export (" + rundir.NcuRaw + ")")
	}
	sc := cfg.scan(run, rundir.NcuRaw, uses{sample: true})
	rep, err := sc.sample, sc.sampleErr
	if err != nil {
		return nil, err
	}
	rep.Sample = "the deep pass profiled a few launches of each top kernel: these region times and launch counts are the sample's, not the run's (" +
		rundir.RegionsMD + " has the run's totals, when a timeline export has NVTX ranges); the metrics per region are this report's"
	return rep, nil
}

// StartTrace starts writing the run's trace of tl, the session's CUPTI
// timeline, and returns what waits for the write and gives its error; nil
// where the rebuild configured by cfg will change tl before it writes the
// trace (it first adds inferred phases to it: settings.InferPhases). A
// session starts it as its deep pass starts, once the runs it times are
// over: the trace, the longest of the rebuild's writes, is then made while
// ncu profiles, not after it.
func StartTrace(run *rundir.Run, cfg *config.Config, tl *timeline.Timeline) func() error {
	dc, err := settingsFor(cfg)
	if err != nil || dc.InferPhases && phases.WouldInfer(tl, dc.Domain) {
		return nil
	}
	return writeTrace(run, tl)
}

// Run rebuilds every derived file of run as configured by cfg, given the
// CUPTI timeline already read of the run's record files (nil: none) and
// what waits for the trace of it that StartTrace began (nil: none began;
// its write ends before the rebuild touches the run): a session's last
// step, given the timeline the session read. The session holds the run's
// lock and writes its manifest.
func Run(run *rundir.Run, cfg *config.Config, read *timeline.Timeline, traced func() error) error {
	dc, err := settingsFor(cfg)
	if err != nil {
		return errors.Join(err, wait(traced))
	}
	dc.read, dc.traced = read, traced
	return rebuild(run, dc)
}

// wait is traced's error, or nil where there is none to wait for.
func wait(traced func() error) error {
	if traced == nil {
		return nil
	}
	return traced()
}

// anomalyNote starts the words of the manifest note of each anomaly of the
// recording (rundir.NoteAnomaly: a rebuild drops them and says again what
// it finds).
const anomalyNote = "recording: "

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
