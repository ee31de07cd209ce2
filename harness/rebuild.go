package harness

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
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
	// Domain is nvtx.domain: a program's stages are its ranges in it.
	Domain string

	memo    *memo        // what one rebuild reads once
	exports *exportReads // the rebuild's one read of each ncu export
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
	return settings{TopN: r.TopN, Regions: rc, Summary: opt, Include: inc, IncludeNames: cfg.NVTX.Include, Domain: cfg.NVTX.Domain}, nil
}

// staleNote reports whether a manifest note is one that sessions before
// the sources record wrote about a derived file, which the rebuild now
// says in the manifest's sources (and which is no longer true of
// ncu/regions/).
func staleNote(n string) bool {
	return strings.HasPrefix(n, "ncu/regions/ summarizes the deep pass, which profiled a sample of launches")
}

// Rebuild writes every derived file of a run from the raw outputs in it,
// with no GPU: it is `deepprof report MAIN`. It chooses each input once
// (kernels, regions, stages; recorded as the manifest's sources) and reads
// each once for all the files it feeds (each ncu export in one pass that
// feeds the kernel table, the regions, the sample and the classification
// made from it): kernels.md and kernels.json,
// ncu/regions/ (the run's totals by NVTX region), ncu/regions-sample/ (the
// deep pass's sample, with its metrics), the stakeholder summary and
// report.md. The manifest is brought in line with MAIN first: what it
// lists and is not there is absent. A missing input makes its outputs
// "missing" in the manifest, with the reason; the other outputs are still
// made.
func rebuild(run *rundir.Run, cfg settings) error {
	var errs []error
	cfg.memo = &memo{}
	// What a writer killed mid-file left (a rebuild or session stopped
	// with SIGKILL) was never part of the run: removed without a note, so
	// that the rebuild is the same whatever was interrupted before it.
	if err := run.Sweep(); err != nil {
		errs = append(errs, err)
	}
	run.ClearRebuild()
	recordInputs(run)
	run.CheckPresence()
	run.DropNotes(func(n string) bool { return staleNote(n) || strings.HasPrefix(n, anomalyNote) })

	if err := decideRanges(run, &cfg); err != nil {
		errs = append(errs, err)
	}
	src := chooseSources(run)
	run.SetSources(src.record())
	cfg.exports = planExports(run, src)
	anomalies := recordingAnomalies(run, cfg)

	tab, kerr := src.kernels.load(run, cfg)
	if kerr != nil && src.kernels.ok {
		errs = append(errs, kerr)
	}
	rules, rulesErr := readRules(run)
	if rulesErr != nil && rulesErr != errNoDetails {
		errs = append(errs, rulesErr)
	}
	// ncu's rules by the kernel table's spelling of each name, for
	// kernels.json and the summary alike.
	rules = byTableNames(rules, tab)

	reg, rerr := src.regions.load(run, cfg)
	if rerr != nil && src.regions.ok {
		errs = append(errs, rerr)
	}
	if reg != nil && !src.regions.every {
		reg.Sample = "no timeline export with NVTX ranges (" + rundir.NcuTimingRaw + ") is in this run, so the run's regions are the deep pass's: a few launches of each top kernel, not the run's totals"
	}
	errs = append(errs, writeRegions(run, rundir.RegionsDir, rundir.RegionsMD, rundir.RegionsJSON, reg, rerr))

	phases, terr := writeTimeline(run, cfg, tab, reg)
	errs = append(errs, terr)

	sample, serr := sampleRegions(run, cfg)
	errs = append(errs, writeRegions(run, rundir.RegionsSampleDir, rundir.RegionsSampleMD, rundir.RegionsSampleJSON, sample, serr))
	if serr != nil && run.HasExport(rundir.NcuRaw) {
		errs = append(errs, serr)
	}

	in := summaryInputs(run, cfg, src, tab, kerr, reg, rerr)
	errs = append(errs, writeKernels(run, tab, kerr, cfg.TopN, rules, summary.Samples(in.Metrics, in.ConfigNS)))
	in.Anomalies = anomalies
	if in.Rules = rules; rulesErr != nil {
		in.RulesMissing = rulesErr.Error()
	}
	if in.WorkloadMissing != "" && src.stages.ok && src.stages.path == rundir.Stage1Report {
		// The workload's report is there and cannot be read: the summary
		// goes without stages, and the rebuild says so in its exit.
		errs = append(errs, errors.New(in.WorkloadMissing))
	}
	in.Phases = phases
	if phases != nil && run.Exists(rundir.TimelineTrace) {
		in.Trace = rundir.TimelineTrace
	}
	if terr != nil && hasCupti(run) {
		in.PhasesMissing = "the CUPTI timeline could not be read: " + terr.Error()
	}
	if sample != nil {
		in.RegionsSampleReport = rundir.RegionsSampleMD
	}
	charts, err := writeSummary(run, in, cfg.Summary)
	errs = append(errs, charts)
	if err != nil {
		// What an earlier rebuild wrote of the summary is not this run's
		// any more: all three are missing (RemoveStale deletes them), and
		// a run without its summary is not complete.
		errs = append(errs, err)
		for _, rel := range []string{rundir.StakeholderSummary, rundir.ReportHTML, rundir.SummaryJSON} {
			run.Record(rel, rundir.StatusMissing, err.Error())
		}
		run.MarkPartial(rundir.RebuildPartial + "the summary could not be made: " + err.Error())
	}
	if removed, err := run.RemoveStale(); err != nil {
		errs = append(errs, err)
	} else if len(removed) > 0 {
		run.Note("rebuild: removed %s, made earlier from a source that now fails (the manifest says why)", strings.Join(removed, ", "))
	}
	run.CheckPresence()
	// One source that fails feeds several files: say it once.
	var once []error
	seen := map[string]bool{}
	for _, e := range errs {
		if e != nil && !seen[e.Error()] {
			seen[e.Error()] = true
			once = append(once, e)
		}
	}
	partial := func() {
		// A run rebuilt in part is not complete: its derived files are not
		// all made from its sources (the next rebuild clears this mark).
		run.MarkPartial(rundir.RebuildPartial + "derived files not made from their sources (" + rundir.ReportMD + " says which and why)")
	}
	if len(once) > 0 {
		partial()
	}
	if err := writeIndex(run); err != nil {
		// report.md says why the others are partial: without it, say so
		// in the manifest, which is written after this.
		once = append(once, err)
		partial()
	}
	return errors.Join(once...)
}

// recordInputs lists in the manifest every raw output, log and provenance
// file of the layout that is in MAIN and that the manifest does not call
// made (a run directory assembled by hand, or one whose session stopped
// before it recorded them); provenance files that are not there are
// listed as missing.
func recordInputs(run *rundir.Run) {
	m := run.Manifest()
	for _, s := range rundir.Layout() {
		if s.Kind == rundir.Derived || s.Kind == rundir.Index || s.Dir {
			continue
		}
		a, listed := m.Find(s.Path)
		switch {
		case run.Exists(s.Path):
			if !listed || a.Status == rundir.StatusMissing {
				run.Record(s.Path, rundir.StatusComplete, "")
			}
		case s.Kind == rundir.Provenance && !listed:
			run.Record(s.Path, rundir.StatusMissing, "not in this run directory (written by deepprof profile)")
		}
	}
}

// sampleRegions is the deep pass's sample by region, with the configured
// metric groups.
func sampleRegions(run *rundir.Run, cfg settings) (*regions.Report, error) {
	if !run.HasExport(rundir.NcuRaw) {
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

// writeKernels writes kernels.md and kernels.json, the top N of tab, or
// records them missing with why.
func writeKernels(run *rundir.Run, tab *model.KernelTable, why error, topN int, rules map[string][]kernels.Rule, samples map[string]*summary.Sample) error {
	if why != nil {
		run.Record(rundir.KernelsMD, rundir.StatusMissing, why.Error())
		run.Record(rundir.KernelsJSON, rundir.StatusMissing, why.Error())
		return nil
	}
	// kernels.md shows the top N; kernels.json holds every kernel of the
	// table's scope (its contract).
	var md, js bytes.Buffer
	if err := render.KernelsMarkdown(&md, tab.Top(topN)); err != nil {
		return err
	}
	if err := render.KernelsJSON(&js, *tab, rules, samples); err != nil {
		return err
	}
	return errors.Join(run.Write(rundir.KernelsMD, md.Bytes()), run.Write(rundir.KernelsJSON, js.Bytes()))
}

// writeRegions replaces the region report directory dir (derived: nothing
// of an earlier rebuild is left in it) with rep, or records its files
// missing with why.
func writeRegions(run *rundir.Run, dir, md, js string, rep *regions.Report, why error) error {
	// The folders above dir are MAIN's, never a link out of it: RemoveAll
	// would remove what the link points into.
	if err := rundir.MkdirIn(run.Dir, filepath.Dir(run.Path(dir))); err != nil {
		run.Record(md, rundir.StatusMissing, err.Error())
		run.Record(js, rundir.StatusMissing, err.Error())
		return err
	}
	if why != nil {
		if err := rundir.RemoveAllIn(run.Dir, run.Path(dir)); err != nil {
			return err
		}
		run.Record(md, rundir.StatusMissing, why.Error())
		run.Record(js, rundir.StatusMissing, why.Error())
		return nil
	}
	if err := writeRegionsDir(run.Dir, run.Path(dir), rep); err != nil {
		run.Record(md, rundir.StatusMissing, err.Error())
		run.Record(js, rundir.StatusMissing, err.Error())
		return err
	}
	run.Record(md, rundir.StatusComplete, "")
	run.Record(js, rundir.StatusComplete, "")
	return nil
}

// RebuildRun rebuilds every derived file of run as configured by cfg: the
// session's last step (session.Session.Report).
func RebuildRun(run *rundir.Run, cfg *config.Config) error {
	dc, err := settingsFor(cfg)
	if err != nil {
		return err
	}
	return rebuild(run, dc)
}

// writeRegionsDir replaces dir, a folder of the run directory root, by the
// region report rep: its files (render), written beside it and then put in
// its place (rundir.ReplaceDirIn).
func writeRegionsDir(root, dir string, rep *regions.Report) error {
	files, err := render.RegionsDirFiles(rep)
	if err != nil {
		return err
	}
	return rundir.ReplaceDirIn(root, dir, files)
}

// WriteRegionsOut writes the region report rep into dir, a user's folder
// (deepprof regions --out): region folders an earlier write made there and
// this one did not are removed, and nothing else (rundir.WriteOwnedDir).
func WriteRegionsOut(dir string, rep *regions.Report) error {
	files, err := render.RegionsDirFiles(rep)
	if err != nil {
		return err
	}
	return rundir.WriteOwnedDir(dir, files)
}

// anomalyNote starts the manifest note of each anomaly of the recording
// (a rebuild drops them and says again what it finds).
const anomalyNote = "recording: "

// recordingAnomalies are what the run's recording holds that changes the
// numbers made from it: CUPTI record files that cannot be read as the
// run's own, and the timeline's anomalies in the program's NVTX domain.
// Each is a manifest note; any marks the run partial.
func recordingAnomalies(run *rundir.Run, cfg settings) []string {
	out := rundir.CuptiFileAnomalies(run)
	if hasCupti(run) {
		if tl, err := cfg.loadTimeline(run); err == nil {
			out = append(out, tl.Anomalies(cfg.Domain)...)
		}
	}
	for _, a := range out {
		run.Note("%s%s", anomalyNote, a)
	}
	if len(out) > 0 {
		run.MarkPartial(fmt.Sprintf("%sthe recording holds %d %s that change%s its numbers (the summary's Anomalies section and the manifest's notes say which)",
			rundir.RebuildPartial, len(out), plural(len(out), "anomaly", "anomalies"), plural(len(out), "s", "")))
	}
	return out
}

// plural is one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeIndex writes report.md: what the run holds, what it was made from,
// what is missing and why.
func writeIndex(run *rundir.Run) error {
	var b bytes.Buffer
	if err := render.IndexMarkdown(&b, run.Manifest(), timelineSection(run)); err != nil {
		return err
	}
	return run.Write(rundir.ReportMD, b.Bytes())
}
