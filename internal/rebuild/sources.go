package rebuild

import (
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/llm-perf-opt/deepprof/internal/nsys"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// source is one file a derived result can be read from. A new tool (a CUPTI
// timeline, NVTX ranges as stages) is one more entry in one of the tables
// below: the choice, the manifest's record of it and every consumer follow.
type source[T any] struct {
	path  string
	what  string // what it holds, as the manifest and the summary say it
	every bool   // it counts every launch of the run (not a sample)
	// timer is the tool that timed its kernels (a source of kernels or
	// regions).
	timer facts.Timer
	// setAside: a file the session marked partial could not be read
	// when it was made (and the timeline fell back to the next source).
	setAside bool
	// present says whether the run has it; nil: the file path is there
	// (plain or gzipped). A directory of files (the CUPTI timeline's) says
	// so itself.
	present func(rec rundir.Recorded) bool
	// export: an ncu CSV export, which a rebuild reads once for all the
	// results made from it (exports.go).
	export bool
	// read reads a file source (load); derive makes a source of the CUPTI
	// timeline (analyse). One of the two is set.
	read   func(run *rundir.Run, rel string, cfg settings) (T, error)
	derive func(on *onTimeline) (T, error)
}

// kernelSources are where the kernel table comes from, in order of
// preference: a timeline that timed every launch before the deep pass,
// which profiled a few launches of each top kernel.
var kernelSources = []source[*model.KernelTable]{
	{path: rundir.TimelineCupti, what: rundir.SourceCuptiKernels, every: true, timer: facts.TimedByCUPTI, present: hasCupti, derive: cuptiKernels},
	{path: rundir.NsysKernSum, what: "nsys, every launch", every: true, timer: facts.TimedByNsys, setAside: true, read: readNsysKernels},
	{path: rundir.NcuTimingRaw, what: "the ncu timing pass, every launch", every: true, timer: facts.TimedByNcu, export: true, read: readNcuKernels},
	{path: rundir.NcuRaw, what: "the deep pass: a sample of launches", timer: facts.TimedByDeepPass, export: true, present: hasDeepRaw, read: readNcuKernels},
}

// regionSources are where the run's NVTX regions (ncu/regions/, the
// summary's regions) come from: exports with each launch's NVTX stack.
var regionSources = []source[*facts.RegionReport]{
	{path: rundir.TimelineCupti, what: rundir.SourceCuptiKernels, every: true, timer: facts.TimedByCUPTI, present: hasCupti, derive: cuptiRegions},
	{path: rundir.NcuTimingRaw, what: "the ncu timing pass, every launch", every: true, timer: facts.TimedByNcu, export: true, read: readRunRegions},
	{path: rundir.NcuRaw, what: "the deep pass: a sample of launches", timer: facts.TimedByDeepPass, export: true, present: hasDeepRaw, read: readRunRegions},
}

// stageSources are where the stages (wall times per repeat), the model and
// the operators come from.
var stageSources = []source[*workload.Report]{
	{path: rundir.TimelineReport, what: rundir.SourceCuptiReport, present: hasCuptiReport, read: readStages},
	{path: rundir.Stage1Report, what: "the workload's report of stage 1 (the program alone)", read: readStages},
	{path: rundir.TimelineCupti, what: rundir.SourceCuptiStages, every: true, present: hasCupti, derive: cuptiStages},
}

// hasCuptiReport reports whether the run has the CUPTI run's workload
// report and the records of that run: its stages are the run's that the
// phases and kernels come from.
func hasCuptiReport(rec rundir.Recorded) bool {
	return rec.Present[rundir.TimelineReport] && hasCupti(rec)
}

// hasDeepRaw reports whether the run has the deep pass's raw page, in one
// file or per rank.
func hasDeepRaw(rec rundir.Recorded) bool { return len(rec.Exports[rundir.NcuRaw]) > 0 }

// chosen is a source picked for a run, or why none was.
type chosen[T any] struct {
	source[T]
	ok  bool
	why string
}

// record is the manifest's account of the choice.
func (c chosen[T]) record() rundir.Source {
	if !c.ok {
		return rundir.Source{Why: c.why}
	}
	return rundir.Source{Path: c.path, What: c.what, EveryLaunch: c.every}
}

// load reads the chosen source where it is a file; a source of the
// timeline gives nothing here (made).
func (c chosen[T]) load(run *rundir.Run, cfg settings) (T, error) {
	var zero T
	switch {
	case !c.ok:
		return zero, fmt.Errorf("%s", c.why)
	case c.read == nil:
		return zero, nil
	}
	return c.read(run, c.path, cfg)
}

// made is the chosen source's result: v and err as load read a file
// source, or a source of the timeline made of on.
func (c chosen[T]) made(v T, err error, on *onTimeline) (T, error) {
	if c.ok && c.derive != nil {
		return c.derive(on)
	}
	return v, err
}

// choose picks the first source of list that the run has.
func choose[T any](rec rundir.Recorded, list []source[T], none string) chosen[T] {
	var paths []string
	for _, s := range list {
		paths = append(paths, s.path)
		if s.present != nil && !s.present(rec) || s.present == nil && !rec.Present[s.path] {
			continue
		}
		if s.setAside && rec.Partial[s.path] {
			continue
		}
		return chosen[T]{source: s, ok: true}
	}
	return chosen[T]{why: fmt.Sprintf("%s (%s)", none, strings.Join(paths, ", "))}
}

// sources are the inputs of a rebuild, chosen once.
type sources struct {
	kernels chosen[*model.KernelTable]
	regions chosen[*facts.RegionReport]
	stages  chosen[*workload.Report]
}

func chooseSources(rec rundir.Recorded) sources {
	return sources{
		kernels: choose(rec, kernelSources, "no kernel export to read"),
		regions: choose(rec, regionSources, "no ncu export with NVTX ranges"),
		stages:  choose(rec, stageSources, "no workload report (stage 1 did not run or wrote none) and no CUPTI timeline with NVTX ranges"),
	}
}

func (s sources) record() rundir.Sources {
	return rundir.Sources{Kernels: s.kernels.record(), Regions: s.regions.record(), Stages: s.stages.record()}
}

func readNcuKernels(run *rundir.Run, rel string, cfg settings) (*model.KernelTable, error) {
	sc := cfg.scan(run, rel, uses{kernels: true})
	return sc.kernels, sc.kernelsErr
}

func readNsysKernels(run *rundir.Run, rel string, _ settings) (*model.KernelTable, error) {
	sums, err := rundir.ReadStats(run, rel, nsys.ReadKernelSums)
	if err != nil {
		return nil, err
	}
	t := nsys.Table(sums, rel)
	return &t, nil
}

// runRegionsConfig is the configuration of ncu/regions/: the run's region
// settings with no metric group. Each launch's duration is always read; a
// timeline export holds nothing else (its "duration" group's cycles and
// clock are not in it), and the metrics per region are the deep pass's
// sample's (ncu/regions-sample/).
func runRegionsConfig(cfg regions.Config) regions.Config {
	cfg.Groups = nil
	return cfg
}

func readRunRegions(run *rundir.Run, rel string, cfg settings) (*facts.RegionReport, error) {
	sc := cfg.scan(run, rel, uses{regions: true})
	return sc.regions, sc.regionsErr
}

func readStages(run *rundir.Run, rel string, _ settings) (*workload.Report, error) {
	return rundir.Parse(run, rel, workload.ReadReport)
}
