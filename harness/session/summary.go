package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/charts"
	"github.com/llm-perf-opt/deepprof/harness/classify"
	"github.com/llm-perf-opt/deepprof/harness/config"
	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/kernels"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/nsys"
	"github.com/llm-perf-opt/deepprof/harness/regions"
	"github.com/llm-perf-opt/deepprof/harness/report"
	"github.com/llm-perf-opt/deepprof/harness/summary"
	"github.com/llm-perf-opt/deepprof/harness/workload"
)

// The stakeholder summary's files besides stakeholder_summary.md.
const (
	SummaryJSON       = "summary.json"
	OperatorsMD       = "operators.md"
	ChartsDir         = "charts"
	ChartTopKernels   = "charts/top_kernels.svg"
	ChartCategories   = "charts/time_by_category.svg"
	ChartStages       = "charts/prefill_vs_decode.svg"
	ChartRoofline     = "charts/roofline.svg"
	chartKernelsCount = 10
)

// deriveSummary writes stakeholder_summary.md, summary.json, operators.md
// and the charts from the run's files. Inputs that are missing make their
// sections say so; only a failure to write is an error.
func deriveSummary(run *artifacts.Run, opt summary.Options) error {
	in := summaryInputs(run)
	s := summary.Build(in, opt)

	var errs []error
	opsWhy := s.Operators.Missing
	var ops []workload.Operator
	if in.Workload != nil {
		ops = in.Workload.Operators
	}
	var b bytes.Buffer
	if err := report.OperatorsMarkdown(&b, run.Manifest().RunID, ops, opsWhy); err != nil {
		return err
	}
	errs = append(errs, run.Write(OperatorsMD, b.Bytes()))
	if opsWhy != "" {
		run.Record(OperatorsMD, artifacts.StatusPartial, opsWhy)
	}

	cs := drawCharts(run, s)
	b.Reset()
	if err := report.SummaryMarkdown(&b, s, cs); err != nil {
		return err
	}
	errs = append(errs, run.Write(artifacts.StakeholderSummary, b.Bytes()))
	if gaps := s.Gaps(); len(gaps) > 0 {
		run.Record(artifacts.StakeholderSummary, artifacts.StatusPartial, "sections without data: "+strings.Join(gaps, "; "))
	}
	b.Reset()
	if err := report.SummaryJSON(&b, s); err != nil {
		return err
	}
	errs = append(errs, run.Write(SummaryJSON, b.Bytes()))
	return errors.Join(errs...)
}

// drawCharts writes each chart the summary has data for, and says why the
// others are not drawn.
func drawCharts(run *artifacts.Run, s *summary.Summary) []report.Chart {
	var out []report.Chart
	draw := func(rel, title string, why string, svg func() ([]byte, error)) {
		c := report.Chart{Path: rel, Title: title}
		if why == "" {
			b, err := svg()
			if err == nil {
				err = run.Write(rel, b)
			}
			if err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			c.Missing = why
			run.Record(rel, artifacts.StatusSkipped, why)
		}
		out = append(out, c)
	}

	k := s.Kernels
	draw(ChartTopKernels, "top kernels by GPU time", k.Missing, func() ([]byte, error) {
		var bars []charts.Bar
		for i, r := range k.Rows {
			if i == chartKernelsCount {
				break
			}
			bars = append(bars, charts.Bar{Label: r.Name, Value: r.TotalMS})
		}
		return charts.Bars("Top kernels by total GPU time", "ms", bars)
	})
	draw(ChartCategories, "GPU time by kernel category", k.Missing, func() ([]byte, error) {
		var bars []charts.Bar
		for _, c := range k.ByCategory {
			bars = append(bars, charts.Bar{Label: c.Category, Value: 100 * c.Share})
		}
		return charts.Bars("GPU time by kernel category", "% of kernel time", bars)
	})
	var stageBars []charts.Bar
	for _, r := range s.Stages.Rows {
		if r.Parent == "" && (r.Name == "prefill" || r.Name == "decode") {
			stageBars = append(stageBars, charts.Bar{Label: r.Name, Value: r.MeanMS})
		}
	}
	why := s.Stages.Missing
	if why == "" && len(stageBars) == 0 {
		why = "the workload report has neither a prefill nor a decode stage"
	}
	draw(ChartStages, "prefill vs decode", why, func() ([]byte, error) {
		return charts.Bars("Prefill vs decode: mean wall time per generate (stage 1)", "ms", stageBars)
	})
	why = k.RooflineWhy
	if k.Missing != "" {
		why = k.Missing
	}
	draw(ChartRoofline, "roofline of the top kernels", why, func() ([]byte, error) {
		// Points are labelled with their # in the Top Kernels table: long
		// kernel names of neighbouring points overlapped.
		rank := map[string]int{}
		for i, r := range k.Rows {
			rank[r.Name] = i + 1
		}
		var pts []charts.Point
		for _, p := range k.Roofline {
			pts = append(pts, charts.Point{Label: "#" + strconv.Itoa(rank[p.Kernel]), Intensity: p.Intensity, FLOPS: p.FLOPS})
		}
		pk := s.Environment.Peak
		return charts.Roofline("Roofline: top kernels by # of the Top Kernels table (deep pass, DRAM)", pts, pk.FLOPS(), pk.BytesPerSec())
	})
	return out
}

// summaryInputs reads what the summary is built from; each input that
// cannot be read comes with the reason.
func summaryInputs(run *artifacts.Run) summary.Inputs {
	in := summary.Inputs{RunID: run.Manifest().RunID}

	var env EnvInfo
	b, err := os.ReadFile(run.Path(artifacts.EnvJSON))
	if err == nil {
		err = json.Unmarshal(b, &env)
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		in.EnvMissing = "no " + artifacts.EnvJSON + " (written by deepprof profile)"
	case err != nil:
		in.EnvMissing = artifacts.EnvJSON + ": " + err.Error()
	default:
		if env.GPU != nil {
			g := env.GPU.Selected
			in.GPU, in.Driver, in.CUDA = &g, env.GPU.Driver, env.GPU.CUDADriverVersion
		} else {
			in.EnvMissing = "no GPU in " + artifacts.EnvJSON + ": " + env.GPUError
		}
		in.Tools = map[string]string{}
		for name, p := range env.Tools {
			if p.Version != "" {
				in.Tools[name] = p.Version
			}
		}
	}

	if f, err := os.Open(run.Path(artifacts.Stage1Report)); err != nil {
		in.WorkloadMissing = "no workload report (" + artifacts.Stage1Report + "): stage 1 did not run or wrote none"
	} else {
		rep, err := workload.ReadReport(f, artifacts.Stage1Report)
		f.Close()
		if err != nil {
			in.WorkloadMissing = err.Error()
		} else {
			in.Workload = rep
		}
	}

	if tab, src, err := fullKernelTable(run); err != nil {
		in.KernelsMissing = err.Error()
	} else {
		in.Kernels, in.KernelsSource = tab, src
	}

	if !exists(run.Path(artifacts.NcuRaw)) {
		in.MetricsMissing = "no deep-pass export (" + artifacts.NcuRaw + ")"
	} else if r, closeFn, err := openExport(run, artifacts.NcuRaw, classify.Options()); err != nil {
		in.MetricsMissing = err.Error()
	} else {
		m, err := classify.FromReader(r, artifacts.NcuRaw)
		closeFn()
		if err != nil {
			in.MetricsMissing = err.Error()
		} else {
			in.Metrics = m
		}
	}

	in.Regions, in.RegionsSampled, in.RegionsMissing = summaryRegions(run)
	return in
}

// fullKernelTable is the whole kernel table (no top-N cut) of the best
// timeline source, as kernels.md's.
func fullKernelTable(run *artifacts.Run) (*kernels.Table, string, error) {
	for _, src := range timelineSources {
		if !exists(run.Path(src)) {
			continue
		}
		if src == nsysKernSum {
			if a, ok := find(run.Manifest(), src); ok && a.Status != artifacts.StatusComplete {
				continue
			}
			sums, err := readSums(run, src, nsys.ReadKernelSums)
			if err != nil {
				return nil, "", err
			}
			t := nsys.Table(sums, src)
			return &t, src + " (nsys, every launch)", nil
		}
		r, closeFn, err := openExport(run, src, ncu.Options{})
		if err != nil {
			return nil, "", err
		}
		t, err := kernels.FromReader(r, src)
		closeFn()
		if err != nil {
			return nil, "", err
		}
		what := " (the ncu timing pass, every launch)"
		if src == artifacts.NcuRaw {
			what = " (the deep pass: a sample of launches)"
		}
		return &t, src + what, nil
	}
	return nil, "", fmt.Errorf("no kernel export in the run (%v)", timelineSources)
}

// summaryRegions are the NVTX regions over every launch of the timing
// pass when the run has it, else the deep pass's sample.
func summaryRegions(run *artifacts.Run) (*regions.Report, bool, string) {
	durOnly := regions.DefaultConfig()
	durOnly.Groups = durOnly.Groups[:1] // duration
	durOnly.TopKernels = 1
	for _, c := range []struct {
		src     string
		sampled bool
	}{{artifacts.NcuTimingRaw, false}, {artifacts.NcuRaw, true}} {
		if !exists(run.Path(c.src)) {
			continue
		}
		r, closeFn, err := openExport(run, c.src, regions.Options(durOnly))
		if err != nil {
			return nil, false, err.Error()
		}
		rep, err := regions.FromReader(r, c.src, durOnly)
		closeFn()
		if err != nil {
			return nil, false, err.Error()
		}
		return rep, c.sampled, ""
	}
	return nil, false, "no ncu export with NVTX ranges (" + artifacts.NcuTimingRaw + ", " + artifacts.NcuRaw + ")"
}

// DeriveConfigFor is how a run configured by cfg makes its derived files:
// its report and regions settings.
func DeriveConfigFor(cfg *config.Config) (DeriveConfig, error) {
	rc, err := cfg.Regions.Config()
	if err != nil {
		return DeriveConfig{}, err
	}
	r := cfg.Report
	opt := summary.Options{TopN: r.TopN, BoundThresholdPct: r.BoundThresholdPct}
	if len(r.Categories) > 0 {
		c, err := classify.Parse(r.Categories)
		if err != nil {
			return DeriveConfig{}, fmt.Errorf("report.categories: %w", err)
		}
		opt.Categories = c
	}
	if r.PeakTFLOPS > 0 {
		opt.PeakOverride = gpu.Peak{TFLOPS: r.PeakTFLOPS, MemoryTBps: r.PeakMemoryTBps,
			Source: "the profile (report.peak_tflops, report.peak_memory_tbps)"}
	}
	return DeriveConfig{TopN: r.TopN, Regions: rc, Summary: opt}, nil
}
