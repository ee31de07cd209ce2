package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/internal/mdtable"
	"github.com/llm-perf-opt/deepprof/harness/kernels"
	"github.com/llm-perf-opt/deepprof/harness/ncu"
	"github.com/llm-perf-opt/deepprof/harness/regions"
	"github.com/llm-perf-opt/deepprof/harness/report"
	"github.com/llm-perf-opt/deepprof/harness/summary"
)

// DeriveConfig says how derived files are made.
type DeriveConfig struct {
	TopN    int // kernels shown in kernels.md; 0: all
	Regions regions.Config
	Summary summary.Options // stakeholder_summary.md
}

// timelineSources are where kernels.md comes from, in order of preference:
// the timing pass saw every launch; the deep pass may have profiled only a
// few launches of each top kernel. nsys's kernel summary, there when the
// timeline came from nsys, timed every launch too (derive_nsys.go).
var timelineSources = []string{nsysKernSum, artifacts.NcuTimingRaw, artifacts.NcuRaw}

// Rebuild writes every derived file of a run from the raw exports in it:
// kernels.md and kernels.json, ncu/regions/ and report.md, then the
// manifest. It needs no GPU: it is `deepprof report MAIN`. A missing input
// makes its outputs "missing" in the manifest, with the reason; the other
// outputs are still made.
func Rebuild(run *artifacts.Run, cfg DeriveConfig) error {
	var errs []error

	src := ""
	for _, s := range timelineSources {
		if exists(run.Path(s)) {
			src = s
			break
		}
	}
	if src == "" {
		reason := fmt.Sprintf("no kernel export to read (%s)", strings.Join(timelineSources, ", "))
		run.Record(artifacts.KernelsMD, artifacts.StatusMissing, reason)
		run.Record(artifacts.KernelsJSON, artifacts.StatusMissing, reason)
	} else if err := deriveKernels(run, src, cfg.TopN); err != nil {
		errs = append(errs, err)
		run.Record(artifacts.KernelsMD, artifacts.StatusMissing, err.Error())
		run.Record(artifacts.KernelsJSON, artifacts.StatusMissing, err.Error())
	}

	if !exists(run.Path(artifacts.NcuRaw)) {
		reason := "no deep-pass export (" + artifacts.NcuRaw + ")"
		run.Record(artifacts.RegionsMD, artifacts.StatusMissing, reason)
		run.Record(artifacts.RegionsJSON, artifacts.StatusMissing, reason)
	} else if err := deriveRegions(run, cfg.Regions); err != nil {
		errs = append(errs, err)
		run.Record(artifacts.RegionsMD, artifacts.StatusMissing, err.Error())
		run.Record(artifacts.RegionsJSON, artifacts.StatusMissing, err.Error())
	}

	for _, raw := range []string{artifacts.NcuRaw, artifacts.NcuDetails, artifacts.NcuTimingRaw, artifacts.Stage1Report,
		artifacts.EnvJSON, artifacts.ConfigYAML, artifacts.InputsYAML} {
		if exists(run.Path(raw)) {
			if a, ok := find(run.Manifest(), raw); !ok || a.Status == artifacts.StatusMissing {
				run.Record(raw, artifacts.StatusComplete, "")
			}
		}
	}
	for _, f := range []string{artifacts.EnvJSON, artifacts.ConfigYAML, artifacts.InputsYAML} {
		if _, ok := find(run.Manifest(), f); !ok && !exists(run.Path(f)) {
			run.Record(f, artifacts.StatusMissing, "not in this run directory (written by deepprof profile)")
		}
	}
	if err := deriveSummary(run, cfg.Summary); err != nil {
		errs = append(errs, err)
		run.Record(artifacts.StakeholderSummary, artifacts.StatusMissing, err.Error())
	}
	if err := run.Write(artifacts.ReportMD, indexMarkdown(run.Manifest())); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func find(m artifacts.Manifest, path string) (artifacts.Artifact, bool) {
	for _, a := range m.Artifacts {
		if a.Path == path {
			return a, true
		}
	}
	return artifacts.Artifact{}, false
}

// exists reports whether a file is there, plain or gzipped (recorded runs
// keep their large exports as FILE.gz).
func exists(p string) bool {
	for _, q := range []string{p, p + ".gz"} {
		if _, err := os.Stat(q); err == nil {
			return true
		}
	}
	return false
}

// openExport opens an export of the run, plain or gzipped (the reader
// recognizes gzip); either way it is named rel in messages and reports.
func openExport(run *artifacts.Run, rel string, opts ncu.Options) (*ncu.Reader, func() error, error) {
	f, err := os.Open(run.Path(rel))
	if errors.Is(err, os.ErrNotExist) {
		f, err = os.Open(run.Path(rel) + ".gz")
	}
	if err != nil {
		return nil, nil, err
	}
	return ncu.NewReader(f, rel, opts), f.Close, nil
}

func deriveKernels(run *artifacts.Run, src string, topN int) error {
	if src == nsysKernSum {
		return deriveNsysKernels(run, topN)
	}
	r, closeFn, err := openExport(run, src, ncu.Options{})
	if err != nil {
		return err
	}
	defer closeFn()
	tab, err := kernels.FromReader(r, src)
	if err != nil {
		return err
	}
	tab = tab.Top(topN)
	var md, js bytes.Buffer
	if err := report.KernelsMarkdown(&md, tab); err != nil {
		return err
	}
	if err := report.KernelsJSON(&js, tab); err != nil {
		return err
	}
	return errors.Join(run.Write(artifacts.KernelsMD, md.Bytes()), run.Write(artifacts.KernelsJSON, js.Bytes()))
}

func deriveRegions(run *artifacts.Run, cfg regions.Config) error {
	r, closeFn, err := openExport(run, artifacts.NcuRaw, regions.Options(cfg))
	if err != nil {
		return err
	}
	defer closeFn()
	rep, err := regions.FromReader(r, artifacts.NcuRaw, cfg)
	if err != nil {
		return err
	}
	if err := report.WriteRegionsDir(run.Path(artifacts.RegionsDir), rep); err != nil {
		return err
	}
	run.Record(artifacts.RegionsMD, artifacts.StatusComplete, "")
	run.Record(artifacts.RegionsJSON, artifacts.StatusComplete, "")
	return nil
}

// indexMarkdown is report.md: what the run holds, what is missing and why.
func indexMarkdown(m artifacts.Manifest) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Run %s\n\n", mdtable.EscapeCell(m.RunID))
	fmt.Fprintf(&b, "Status: **%s**", m.Status)
	if m.Reason != "" {
		fmt.Fprintf(&b, ": %s", mdtable.EscapeCell(m.Reason))
	}
	b.WriteString(".\n\n")
	if len(m.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range m.Notes {
			fmt.Fprintf(&b, "- %s\n", mdtable.EscapeCell(n))
		}
		b.WriteString("\n")
	}
	if len(m.Steps) > 0 {
		b.WriteString(timeSection(m.Steps))
	}
	t := mdtable.Table{Header: []string{"artifact", "status", "why"}}
	for _, a := range m.Artifacts {
		if a.Path == artifacts.ReportMD {
			continue
		}
		link := mdtable.EscapeCell(a.Path)
		if a.Status == artifacts.StatusComplete || a.Status == artifacts.StatusPartial {
			link = "[" + link + "](" + a.Path + ")"
		}
		t.Rows = append(t.Rows, []string{link, string(a.Status), mdtable.EscapeCell(a.Reason)})
	}
	b.WriteString(t.String())
	return []byte(b.String())
}

// timeSection is report.md's account of where the session's time went, and
// the profiling overhead: the profiling steps' time against the plain
// workload run of stage 1.
func timeSection(steps []artifacts.StepTime) string {
	var b strings.Builder
	b.WriteString("## Where the time went\n\n")
	t := mdtable.Table{Header: []string{"step", "seconds", "exit status"}, Right: []bool{false, true, true}}
	var plain, profiling float64
	for _, st := range steps {
		t.Rows = append(t.Rows, []string{mdtable.EscapeCell(st.Name), mdtable.Fixed(st.Seconds, 1), fmt.Sprint(st.ExitCode)})
		switch {
		case st.Name == "stage1":
			plain += st.Seconds
		case strings.HasPrefix(st.Name, "ncu-") && st.Name != "ncu-sections", strings.HasPrefix(st.Name, "export-"),
			strings.HasPrefix(st.Name, "nsys-"):
			profiling += st.Seconds
		}
	}
	b.WriteString(t.String())
	if plain > 0 {
		fmt.Fprintf(&b, "\nOverhead: the profiler passes and exports took %s s; the plain workload run (stage 1) took %s s, so profiling cost %s times the plain run.\n\n",
			mdtable.Fixed(profiling, 1), mdtable.Fixed(plain, 1), mdtable.Fixed(profiling/plain, 1))
	} else {
		b.WriteString("\n")
	}
	return b.String()
}
