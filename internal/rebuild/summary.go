package rebuild

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// chartKernelsCount is how many kernels the top-kernels chart shows.
const chartKernelsCount = 10

// drawCharts draws each chart the summary has data for, and says why the
// others are not drawn.
func drawCharts(s *facts.Summary) []render.Chart {
	var out []render.Chart
	draw := func(rel, title string, why string, svg func() ([]byte, error)) {
		c := render.Chart{Path: rel, Title: title}
		if why == "" {
			b, err := svg()
			c.SVG = b
			if err != nil {
				why = err.Error()
			}
		}
		c.Missing = why
		out = append(out, c)
	}

	k := s.Kernels
	draw(rundir.ChartTopKernels, "top kernels by GPU time", k.Missing, func() ([]byte, error) {
		var bars []render.Bar
		for i, r := range k.Rows {
			if i == chartKernelsCount {
				break
			}
			// numbered as in the Top Kernels table, by the same unique short name
			bars = append(bars, render.Bar{Label: fmt.Sprintf("#%d %s", i+1, r.Shown()), Value: r.TotalMS})
		}
		return render.Bars("Top kernels by total GPU time", "ms", bars)
	})
	draw(rundir.ChartCategories, "GPU time by kernel category", k.Missing, func() ([]byte, error) {
		var bars []render.Bar
		for _, c := range k.ByCategory {
			bars = append(bars, render.Bar{Label: c.Category, Value: 100 * c.Share})
		}
		return render.Bars("GPU time by kernel category", "% of kernel time", bars)
	})
	// Each phase's wall time, and beside it its kernel time where the
	// regions give one (the Stages section's "wall time against kernel
	// time"): the gap between the two is the host's.
	kernelMS := map[string]float64{}
	for _, g := range s.Narrative.GPUBusy {
		kernelMS[g.Phase] = g.GPUMS
	}
	var stageBars []render.Bar
	for _, r := range s.Stages.Rows {
		if r.Phase != "" {
			// The wall time of the run the kernel times are (the CUPTI
			// run's own, where the row is the program alone's).
			wall := r.MeanMS
			if r.Recorded != nil {
				wall = r.Recorded.MeanMS
			}
			stageBars = append(stageBars, render.Bar{Label: r.Name + ": wall", Value: wall})
			if v, ok := kernelMS[r.Name]; ok {
				stageBars = append(stageBars, render.Bar{Label: r.Name + ": kernels", Value: v})
			}
		}
	}
	why := ""
	if s.Stages.Missing != "" {
		why = "no stage times (the Stages section says why)" // said once, there
	}
	if why == "" && len(stageBars) == 0 {
		why = "no stage is a prefill or a decode (phases.prefill and phases.decode name them)"
	}
	title := "Prefill vs decode: mean wall time per generate (stage 1) and kernel time"
	switch {
	case s.Stages.FromRanges:
		title = "Prefill vs decode: mean wall time and kernel time per NVTX range instance"
	case s.Stages.Source != "":
		title = "Prefill vs decode: mean wall time per generate (the CUPTI run) and kernel time"
	}
	draw(rundir.ChartStages, "prefill vs decode", why, func() ([]byte, error) {
		return render.Bars(title, "ms", stageBars)
	})
	why = k.RooflineWhy
	if k.Missing != "" {
		why = k.Missing
	}
	draw(rundir.ChartRoofline, "roofline of the top kernels", why, func() ([]byte, error) {
		// Points are labelled with their # in the Top Kernels table: long
		// kernel names of neighbouring points overlapped.
		rank := map[string]int{}
		for i, r := range k.Rows {
			rank[r.Name] = i + 1
		}
		var pts []render.Point
		for _, p := range k.Roofline {
			pts = append(pts, render.Point{Label: "#" + strconv.Itoa(rank[p.Kernel]), Intensity: p.Intensity, FLOPS: p.FLOPS})
		}
		pk := s.Environment.Peak
		return render.Roofline("Roofline: top kernels by # of the Top Kernels table (deep pass, DRAM)", pts, pk.FLOPS(), pk.BytesPerSec())
	})
	return out
}

// summaryFiles are the files the summary reads beside the rebuild's other
// inputs, each with the reason where it cannot be read.
type summaryFiles struct {
	env    *workload.EnvInfo
	envErr error
	// stages is the report of the stages' source where that is a file
	// (the chosen source's error where none is chosen; nil and nil where
	// the stages are made of the timeline, cuptiStages).
	stages    *workload.Report
	stagesErr error
	// alone is stage 1's report where the stages come from the CUPTI
	// run's (nil and nil: the run has none).
	alone    *workload.Report
	aloneErr error
	// runs are stage 1's runs, and model the model facts the program's
	// framework gave, where the stages come from the timeline's ranges.
	runs     *workload.Runs
	runsErr  error
	model    *workload.ModelFacts
	modelErr error
	// metrics are the deep pass's per-kernel metrics (ncu's), where the
	// run has its raw page.
	metrics    map[string]*kernels.Metrics
	metricsErr error
}

// readSummaryFiles reads the files the summary is built from beside in's
// other inputs: env.json, the stages' reports or runs, the model's facts,
// the deep pass's metrics.
func readSummaryFiles(run *rundir.Run, in *inputs) summaryFiles {
	var f summaryFiles
	f.env, f.envErr = readEnv(run)
	src := in.src.stages
	f.stages, f.stagesErr = src.load(run, in.cfg)
	switch {
	case !src.ok:
	case src.path == rundir.TimelineReport && in.rec.Present[rundir.Stage1Report]:
		f.alone, f.aloneErr = readStages(run, rundir.Stage1Report, in.cfg)
	case src.path == rundir.TimelineCupti:
		f.runs, f.runsErr = readStage1Runs(run)
		if in.rec.Present[rundir.TimelineModel] {
			f.model, f.modelErr = rundir.Parse(run, rundir.TimelineModel, workload.ReadModelFacts)
		}
	}
	if hasDeepRaw(in.rec) {
		sc := in.cfg.scan(run, rundir.NcuRaw, uses{metrics: true})
		f.metrics, f.metricsErr = sc.metrics, sc.metricsErr
	}
	return f
}

// summaryInputs gathers what the summary is built from: the inputs the
// rebuild read once and what analyse made of them (the timeline, kernels,
// regions: each with the reason when it could not be), the stages,
// env.json and the deep pass's metrics, on: what the timeline's sources
// are made of; each input that cannot be read comes with the reason.
// modelErr is why the model facts that are there could not be read.
func summaryInputs(read *inputs, res *result, on *onTimeline) (in summary.Inputs, modelErr error) {
	cfg, src, f, tab, kerr := res.cfg, read.src, read.files, res.tab, res.kerr
	tl := read.readTimeline()
	in = summary.Inputs{RunID: read.runID}

	env, err := f.env, f.envErr
	switch {
	case errors.Is(err, os.ErrNotExist):
		in.EnvMissing = "no " + rundir.EnvJSON + " (written by deepprof profile)"
	case err != nil:
		in.EnvMissing = err.Error()
	default:
		if env.GPU != nil {
			g := env.GPU.Selected
			in.GPU, in.Driver, in.CUDA = &g, env.GPU.Driver, env.GPU.CUDADriverVersion
			in.Used = env.GPU.Used
			for _, l := range env.GPU.Topology {
				in.Links = append(in.Links, l.Line)
			}
		} else {
			in.EnvMissing = "no GPU in " + rundir.EnvJSON + ": " + env.GPUError
		}
		in.Tools = map[string]string{}
		for name, p := range env.Tools {
			if p.Version != "" {
				in.Tools[name] = p.Version
			}
		}
	}

	if rep, err := src.stages.made(f.stages, f.stagesErr, on); err != nil {
		in.WorkloadMissing = err.Error()
	} else {
		in.Workload = rep
		if src.stages.path == rundir.TimelineReport {
			// stage 1's report, where there is one: the program's speed
			// beside the stages, and its operator table; else the CUPTI
			// run's own repeats after the library detached
			if f.alone != nil && f.aloneErr == nil {
				// stage 1's operator table, made with no profiler
				// attached, whatever the CUPTI run made
				in.Alone, rep.Operators = f.alone, f.alone.Operators
			} else if f.aloneErr != nil {
				// never the detached repeats in its place: said instead
				in.AloneMissing = f.aloneErr.Error()
			} else if alone, ok := rep.AloneReport(); ok {
				in.Alone, in.AloneDetached = alone, true
			}
		}
		if src.stages.path != rundir.Stage1Report {
			in.WorkloadSource = src.stages.path + " (" + src.stages.what + ")"
			in.StagesFromRanges = src.stages.path == rundir.TimelineCupti
			if in.StagesFromRanges && read.phasesFound {
				in.WorkloadSource = src.stages.path + " (" + rundir.SourceInferredStages + ")"
			}
		}
	}

	if kerr != nil {
		in.KernelsMissing = kerr.Error()
	} else {
		in.Kernels, in.KernelsSource, in.KernelsTimedBy = tab, src.kernels.path+" ("+src.kernels.what+")", src.kernels.timer
		if src.kernels.timer == facts.TimedByCUPTI {
			in.KernelRanges, in.KernelRangesInferred = cfg.IncludeNames, cfg.inferredScope
			if in.Kernels, in.KernelsWarmup, kerr = summaryKernels(on, tab); kerr != nil {
				in.Kernels, in.KernelsMissing = nil, kerr.Error()
			}
		}
	}

	if !hasDeepRaw(read.rec) {
		in.MetricsMissing = "no deep-pass export (" + rundir.NcuRaw + ")"
		if tl != nil {
			if m, err := libraryMetrics(tl); err != nil {
				in.MetricsMissing = err.Error()
			} else if m != nil {
				in.Metrics, in.MetricsBy, in.MetricsMissing = byTableNames(m, tab), facts.DeepByLibrary, ""
				in.ConfigNS = res.configTimesOf(tl)
			}
		}
	} else if f.metricsErr != nil {
		in.MetricsMissing = f.metricsErr.Error()
	} else {
		in.Metrics, in.MetricsBy = byTableNames(f.metrics, tab), facts.DeepByNcu
		if src.kernels.path == rundir.TimelineCupti && tl != nil {
			in.ConfigNS = res.configTimesOf(tl)
		}
	}

	in.Program = program(tl, tab)

	if res.rerr != nil {
		in.RegionsMissing = res.rerr.Error()
	} else {
		in.Regions, in.RegionsSampled, in.RegionsTimedBy = res.reg, !src.regions.every, src.regions.timer
	}

	if in.StagesFromRanges && read.rec.Present[rundir.TimelineModel] {
		// The model facts the program's framework gave; where they come
		// from names the file.
		if modelErr = f.modelErr; modelErr == nil {
			mf := *f.model
			mf.From += " (" + rundir.TimelineModel + ")"
			in.ProgramFacts = &mf
		}
	}
	if m := read.rec.Manifest; m.Status != rundir.StatusComplete && m.PartialBy != rundir.PartialByRebuild {
		in.SessionPartial = m.Reason
	}
	return in, modelErr
}

// program is what kind of program the run profiled (summary.ProgramOf),
// from its CUPTI timeline tl where it has one (the executables of the
// processes that launched kernels, their kernels and API calls), else from
// the kernel table's names alone.
func program(tl *timeline.Timeline, tab *model.KernelTable) facts.Program {
	var exes []string
	names := map[string]bool{}
	apis := func(func(string) bool) {}
	if tl != nil {
		for _, p := range tl.Processes {
			if len(p.Kernels) > 0 {
				exes = append(exes, p.Header.Exe)
			}
			for i := range p.Kernels {
				names[p.Fn(&p.Kernels[i]).Name()] = true
			}
		}
		if len(exes) == 0 {
			for _, p := range tl.Processes {
				exes = append(exes, p.Header.Exe)
			}
		}
		apis = func(yield func(string) bool) {
			for _, p := range tl.Processes {
				for i := range p.APIs {
					if c := p.CallOf(&p.APIs[i]); c != nil && !yield(c.Function) {
						return
					}
				}
			}
		}
	} else if tab != nil {
		for _, k := range tab.Kernels {
			names[k.Name] = true
		}
	}
	return summary.ProgramOf(exes, slices.Sorted(maps.Keys(names)), apis)
}

// byTableNames re-keys the deep pass's per-kernel results, by ncu's
// spelling of each kernel's name, by the kernel table's names: the CUPTI
// timeline's (the C++ runtime's spelling) where the table comes from it
// (ncu.MatchSpellings). A result of no table kernel is kept by its own
// name.
func byTableNames[V any](m map[string]V, tab *model.KernelTable) map[string]V {
	if m == nil || tab == nil {
		return m
	}
	names := make([]string, 0, len(tab.Kernels))
	for _, k := range tab.Kernels {
		names = append(names, k.Name)
	}
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	have := slices.Sorted(maps.Keys(m))
	out := make(map[string]V, len(m))
	for _, h := range have {
		out[h] = m[h]
	}
	for n, h := range ncu.MatchSpellings(names, have) {
		out[n] = m[h]
	}
	return out
}

// configTimes is, for each of keeps, each kernel's time by launch
// configuration (kernels.ConfigKey) in the timeline's launches it admits
// (all of them when it admits none, as the kernel table then takes the
// program's outermost ranges): what weighs the deep pass's sample of each
// kernel. The launches are read once for all of keeps, and once more where
// one admits none.
func configTimes(tl *timeline.Timeline, keeps ...func(*timeline.Kernel, *model.Launch) bool) []map[string]map[string]float64 {
	// by function first (a kernel's configuration on a stream): the names
	// and keys are made once each, and the sums of whole nanoseconds are
	// exact in any order
	sum := func(keeps ...func(*timeline.Kernel, *model.Launch) bool) []map[*timeline.Function]float64 {
		byFn := make([]map[*timeline.Function]float64, len(keeps))
		for i := range byFn {
			byFn[i] = map[*timeline.Function]float64{}
		}
		for k, l := range tl.KernelLaunches() {
			if !l.Duration.Valid {
				continue
			}
			for i, keep := range keeps {
				if keep(k, l) {
					byFn[i][k.Function] += l.Duration.Base
				}
			}
		}
		return byFn
	}
	var all map[*timeline.Function]float64
	out := make([]map[string]map[string]float64, len(keeps))
	for i, byFn := range sum(keeps...) {
		if len(byFn) == 0 {
			if all == nil {
				all = sum(func(*timeline.Kernel, *model.Launch) bool { return true })[0]
			}
			byFn = all
		}
		m := map[string]map[string]float64{}
		for fn, ns := range byFn {
			c := m[fn.Name()]
			if c == nil {
				c = map[string]float64{}
				m[fn.Name()] = c
			}
			c[kernels.ConfigKey(fn.Grid.String(), fn.Block.String())] += ns
		}
		out[i] = m
	}
	return out
}

// configTimesOf is the summary's times by launch configuration, those of
// its kernel table's launches (summaryLaunch), made in one pass with
// res.configNS, those of kernels.json's (the profiled ranges, warm-up
// included).
func (res *result) configTimesOf(tl *timeline.Timeline) map[string]map[string]float64 {
	inRanges := model.InRangesOf(res.cfg.Include)
	ts := configTimes(tl, res.cfg.summaryLaunch(res.steady), func(_ *timeline.Kernel, l *model.Launch) bool { return inRanges(l) })
	res.configNS = ts[1]
	return ts[0]
}
