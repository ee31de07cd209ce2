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

// summaryInputs gathers what the summary is built from: the inputs the
// rebuild read once (the timeline, kernels, regions: each with the reason
// when it could not be), the stages, env.json and the deep pass's metrics;
// each input that cannot be read comes with the reason.
func summaryInputs(run *rundir.Run, read *inputs) summary.Inputs {
	cfg, src, tab, kerr, reg, rerr := read.cfg, read.src, read.tab, read.kerr, read.reg, read.rerr
	tl := read.readTimeline()
	in := summary.Inputs{RunID: read.runID}

	env, err := readEnv(run)
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

	if rep, err := src.stages.load(run, cfg); err != nil {
		in.WorkloadMissing = err.Error()
	} else {
		in.Workload = rep
		if src.stages.path == rundir.TimelineReport {
			// stage 1's report, where there is one: the program's speed
			// beside the stages, and its operator table; else the CUPTI
			// run's own repeats after the library detached
			if alone, err := readStages(run, rundir.Stage1Report, cfg); err == nil {
				// stage 1's operator table, made with no profiler
				// attached, whatever the CUPTI run made
				in.Alone, rep.Operators = alone, alone.Operators
			} else if read.rec.Present[rundir.Stage1Report] {
				// never the detached repeats in its place: said instead
				in.AloneMissing = err.Error()
			} else if alone, ok := rep.AloneReport(); ok {
				in.Alone, in.AloneDetached = alone, true
			}
		}
		if src.stages.path != rundir.Stage1Report {
			in.WorkloadSource = src.stages.path + " (" + src.stages.what + ")"
			in.StagesFromRanges = src.stages.path == rundir.TimelineCupti
			if in.StagesFromRanges && cfg.memo != nil && cfg.memo.phasesFound {
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
			if in.Kernels, in.KernelsWarmup, kerr = summaryKernels(tl, cfg, tab); kerr != nil {
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
				in.ConfigNS = configTimes(tl, cfg.summaryLaunch(tl))
			}
		}
	} else if sc := cfg.scan(run, rundir.NcuRaw, uses{metrics: true}); sc.metricsErr != nil {
		in.MetricsMissing = sc.metricsErr.Error()
	} else {
		in.Metrics, in.MetricsBy = byTableNames(sc.metrics, tab), facts.DeepByNcu
		if src.kernels.path == rundir.TimelineCupti && tl != nil {
			in.ConfigNS = configTimes(tl, cfg.summaryLaunch(tl))
		}
	}

	in.Program = program(tl, tab)

	if rerr != nil {
		in.RegionsMissing = rerr.Error()
	} else {
		in.Regions, in.RegionsSampled, in.RegionsTimedBy = reg, !src.regions.every, src.regions.timer
	}
	return in
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

// configTimes is each kernel's time by launch configuration
// (kernels.ConfigKey) in the timeline's launches that keep admits (all of
// them when it admits none, as the kernel table then takes the program's
// outermost ranges): what weighs the deep pass's sample of each kernel.
func configTimes(tl *timeline.Timeline, keep func(*timeline.Kernel, *model.Launch) bool) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	add := func(keep func(*timeline.Kernel, *model.Launch) bool) {
		// by function first (a kernel's configuration on a stream): the
		// names and keys are made once each, and the sums of whole
		// nanoseconds are exact in any order
		byFn := map[*timeline.Function]float64{}
		for k, l := range tl.KernelLaunches() {
			if keep(k, l) && l.Duration.Valid {
				byFn[k.Function] += l.Duration.Base
			}
		}
		for fn, ns := range byFn {
			m := out[fn.Name()]
			if m == nil {
				m = map[string]float64{}
				out[fn.Name()] = m
			}
			m[kernels.ConfigKey(fn.Grid.String(), fn.Block.String())] += ns
		}
	}
	add(keep)
	if len(out) == 0 {
		add(func(*timeline.Kernel, *model.Launch) bool { return true })
	}
	return out
}
