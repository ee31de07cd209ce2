// The commands that read a file or two runs and write a table: kernels,
// regions, diff, baseline.

package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// The output formats of the table commands.
const (
	FormatText = "text" // aligned plain text within Width, long names cut
	FormatMD   = "md"   // Markdown tables, names whole
	FormatJSON = "json" // the command's JSON contract
	FormatCSV  = "csv"  // RFC 4180, a header row, numbers unrounded
)

// DefaultWidth is plain text's width where the terminal does not say.
const DefaultWidth = render.TextWidth

// TableOptions say how a table command writes: its format (one of the
// Format constants) and, for FormatText, the width in cells (0:
// DefaultWidth).
type TableOptions struct {
	Format string
	Width  int
}

// markdown writes what md renders: as Markdown, or for FormatText as plain
// text within the width.
func (o TableOptions) markdown(w io.Writer, md func(io.Writer) error) error {
	if o.Format != FormatText {
		return md(w)
	}
	var b bytes.Buffer
	if err := md(&b); err != nil {
		return err
	}
	width := o.Width
	if width <= 0 {
		width = DefaultWidth
	}
	_, err := io.WriteString(w, render.RenderWidth(b.Bytes(), width))
	return err
}

// OptionError is an option's value that the command cannot take (a
// pattern that does not compile, an unknown metric group): the caller's
// mistake, said with the option's flag.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// InputError is an input the command refuses as it is (not a run
// directory, a run that is not complete, two runs that do not measure one
// thing): nothing is written.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// KernelsOptions say what Kernels lists: the Top kernels by total time (0:
// all), in the table's format.
type KernelsOptions struct {
	TableOptions
	Top int
}

// Kernels writes the kernel table of an ncu CSV export (a raw page or a
// --log-file capture, plain or gzip) read from r, named name in errors.
func Kernels(r io.Reader, name string, o KernelsOptions, w io.Writer) error {
	t, err := ncu.KernelTable(ncu.NewReader(r, name, ncu.Options{}), name)
	if err != nil {
		return err
	}
	t = t.Top(o.Top)
	switch o.Format {
	case FormatJSON:
		return render.KernelsJSON(w, t, nil, nil)
	case FormatCSV:
		return render.KernelsCSV(w, t)
	case FormatText:
		t = displayNamed(t)
	}
	return o.markdown(w, func(w io.Writer) error { return render.KernelsMarkdown(w, t) })
}

// displayNamed is t with each kernel under its display name
// (facts.DisplayNames: its function, and what tells its instances apart),
// for plain text: Markdown and JSON keep the full names.
func displayNamed(t model.KernelTable) model.KernelTable {
	names := make([]string, len(t.Kernels))
	for i, k := range t.Kernels {
		names[i] = k.Name
	}
	short := facts.DisplayNames(names)
	t.Kernels = slices.Clone(t.Kernels)
	for i := range t.Kernels {
		t.Kernels[i].Name = short[i]
	}
	return t
}

// DefaultRegionMetrics are the metric groups summarized per region by
// default, comma-separated.
func DefaultRegionMetrics() string { return regions.GroupNames(regions.DefaultGroups()) }

// DefaultRegionTop is how many kernels each region lists by default.
const DefaultRegionTop = regions.DefaultTopKernels

// RegionsOptions say what Regions reports. The patterns are regular
// expressions, each named in errors by its flag of deepprof regions:
// Include and Exclude (--include, --exclude) choose the regions listed by
// name (stack path), KernelInclude and KernelExclude (--kernel-include,
// --kernel-exclude) the launches they count; exclude wins, and a pattern
// that matches nothing is an error. Metrics are comma-separated metric
// groups ("none": none; "": DefaultRegionMetrics()). Top kernels per region
// (0: all). NoAggregate leaves out the regions summed across every
// (process, device) scope. Out, when set, is a folder to write report.md,
// report.json and a folder per region into, instead of w.
type RegionsOptions struct {
	TableOptions
	Include, Exclude, KernelInclude, KernelExclude []string
	Metrics                                        string
	Top                                            int
	NoAggregate                                    bool
	Out                                            string
}

// config is the regions configuration of o, its patterns compiled and
// its metric groups found: an OptionError names the flag of what is wrong.
func (o RegionsOptions) config() (regions.Config, error) {
	cfg := regions.DefaultConfig()
	cfg.RegionInclude, cfg.RegionExclude = o.Include, o.Exclude
	cfg.Include, cfg.Exclude = o.KernelInclude, o.KernelExclude
	cfg.RequireMatches = true // a filter that matches nothing is a mistake, not an empty report
	cfg.Aggregate = !o.NoAggregate
	cfg.TopKernels = o.Top
	cfg.Groups = []regions.Group{}
	m := strings.TrimSpace(o.Metrics)
	if m == "" {
		m = DefaultRegionMetrics()
	}
	if m != "none" {
		names := strings.Split(m, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
		var err error
		if cfg.Groups, err = regions.SelectGroups(regions.DefaultGroups(), names); err != nil {
			return cfg, &OptionError{"--metrics: " + err.Error()}
		}
	}
	if _, err := regions.New(cfg); err != nil {
		var pe *regions.PatternError
		if errors.As(err, &pe) {
			return cfg, &OptionError{fmt.Sprintf("%s %q: not a valid regular expression: %v", regionFlag(pe.Target, pe.Flag), pe.Pattern, pe.Err)}
		}
		return cfg, err
	}
	return cfg, nil
}

// Check says what is wrong with the options (an OptionError), before
// anything is read.
func (o RegionsOptions) Check() error {
	_, err := o.config()
	return err
}

// Regions writes the NVTX-region report of an ncu CSV export read from r
// (named name in errors).
func Regions(r io.Reader, name string, o RegionsOptions, w io.Writer) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	rep, err := regions.FromReader(ncu.NewReader(r, name, ncu.Options{Metrics: regions.RawMetrics(cfg.Groups)}), name, cfg)
	if ue := (*regions.UnmatchedError)(nil); errors.As(err, &ue) {
		return unmatchedFilters(ue)
	}
	if err != nil {
		return err
	}
	if o.Out != "" {
		return WriteRegionsOut(o.Out, rep)
	}
	switch o.Format {
	case FormatJSON:
		return render.RegionsJSON(w, rep)
	case FormatCSV:
		return render.RegionsCSV(w, rep)
	}
	return o.markdown(w, func(w io.Writer) error { return render.RegionsMarkdownAlone(w, rep) })
}

// WriteRegionsOut writes the region report rep into dir, a user's folder
// (deepprof regions --out): region folders an earlier write made there and
// this one did not are removed where deepprof's markers show them its own,
// and nothing else (rundir.WriteOwnedDir).
func WriteRegionsOut(dir string, rep *facts.RegionReport) error {
	files, err := render.RegionsDirFiles(rep)
	if err != nil {
		return err
	}
	return rundir.WriteOwnedDir(dir, files)
}

// regionFlag is the flag of a region filter's pattern: --include and
// --exclude choose regions, --kernel-include and --kernel-exclude the
// launches they count.
func regionFlag(target, flag string) string {
	if target == regions.TargetKernel {
		return "--kernel-" + flag
	}
	return "--" + flag
}

// unmatchedFilters says, by flag, which filters matched nothing:
// `FILE: --include "prefil" matched no region (regions: prefill, decode_all)`.
func unmatchedFilters(e *regions.UnmatchedError) error {
	msgs := make([]string, len(e.Misses))
	for i, m := range e.Misses {
		msgs[i] = fmt.Sprintf("%s %q %s", regionFlag(m.Target, m.Flag), m.Pattern, e.MatchedNothing(m))
	}
	return fmt.Errorf("%s: %s", e.Source, strings.Join(msgs, "; "))
}

// DiffOptions say how Diff compares: a change counts when it exceeds
// Threshold (a fraction of A); AllowMismatch compares runs of different
// models, shapes, kernel sources or GPUs, AllowPartial runs that are not
// complete (each refused otherwise, as an InputError). Gate is what fails
// (model.GateGPU, model.GateHost: a stage whose wall the host moved fails
// too); "" takes a baseline file's gate (its "gate"), else GateGPU.
type DiffOptions struct {
	TableOptions
	Threshold                   float64
	AllowMismatch, AllowPartial bool
	Gate                        string
}

// DiffOutcome is what a comparison found: whether something regressed
// (and what, worst first), or a part could not be compared (and why).
type DiffOutcome struct {
	Regression  bool
	Regressions []string
	Incomplete  bool
	Missing     []string // "RUN has no FILE"
}

// Diff compares run B against run A (each a run directory or a baseline
// file of Baseline) and writes the comparison to w.
func Diff(a, b string, o DiffOptions, w io.Writer) (DiffOutcome, error) {
	var sides [2]*compare.Summary
	for i, p := range []string{a, b} {
		s, err := loadSide(p)
		if err != nil {
			return DiffOutcome{}, &InputError{err}
		}
		if err := s.Sound(); err != nil && !o.AllowPartial {
			return DiffOutcome{}, &InputError{err}
		}
		sides[i] = s
	}
	if !o.AllowMismatch {
		if diffs := compare.SetupDifferences(sides[0], sides[1]); len(diffs) > 0 {
			return DiffOutcome{}, &InputError{fmt.Errorf("%s: a diff of them counts every difference as a regression or an improvement; compare runs of one model, workload shape and kernel source on one GPU, or pass --allow-mismatch", strings.Join(diffs, "; "))}
		}
	}
	th := compare.Uniform(o.Threshold)
	var err error
	if th.GateHost, err = compare.GatesHost(o.Gate, sides[0], sides[1]); err != nil {
		return DiffOutcome{}, err
	}
	res := compare.Compare(sides[0], sides[1], th)
	switch o.Format {
	case FormatJSON:
		err = compare.JSON(res, w)
	case FormatCSV:
		err = render.DiffCSV(w, res)
	default:
		err = o.markdown(w, func(w io.Writer) error { return render.DiffMarkdown(w, res) })
	}
	out := DiffOutcome{Regression: res.Regression, Regressions: res.Regressions, Incomplete: res.Incomplete}
	for _, m := range res.Missing {
		out.Missing = append(out.Missing, fmt.Sprintf("%s has no %s", m.Run, m.File))
	}
	return out, err
}

// loadSide reads a run directory, or a baseline file written by Baseline.
func loadSide(path string) (*compare.Summary, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such run directory or baseline file", path)
	}
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return compare.Load(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := compare.Read(f, path)
	if err != nil {
		return nil, err
	}
	return b.Summary(), nil
}

// DefaultBaselineTop is how many kernels a baseline keeps by default.
const DefaultBaselineTop = compare.DefaultTop

// BaselineOptions say what Baseline keeps: the Top kernels by total time
// (0: all); AllowPartial writes one of a run that is not complete; Gate is
// the gate a comparison with it uses when it asks for none (model.GateGPU,
// model.GateHost; "": none kept).
type BaselineOptions struct {
	Top          int
	AllowPartial bool
	Gate         string
}

// Baseline writes the baseline of the run directories dirs to w: what a
// later run is compared against (Diff) in CI. The first run's figures,
// and, from several runs of one program (each its own process), the spread
// between them (compare.FromRuns). A run that is not one, or not complete,
// and runs that are not of one program, are an InputError.
func Baseline(dirs []string, o BaselineOptions, w io.Writer) error {
	b, err := compare.FromRuns(dirs, o.Top, o.AllowPartial)
	if err != nil {
		if ue := (*compare.UnsoundError)(nil); errors.As(err, &ue) || errors.Is(err, compare.ErrNotRun) ||
			errors.Is(err, compare.ErrNothingToCompare) || errors.Is(err, compare.ErrNotOneProgram) {
			return &InputError{err}
		}
		return err
	}
	if err := b.SetGate(o.Gate); err != nil {
		return err
	}
	return b.Write(w)
}
