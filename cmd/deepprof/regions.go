package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
)

// stringList is a flag that may be given many times.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

const regionsSynopsis = "regions [--format text|md|json|csv] [--include RE]... [--exclude RE]... [--kernel-include RE]... [--kernel-exclude RE]... [--metrics GROUPS] [--top N] [--aggregate=false] [--out DIR] FILE|-"

// regionFlag is the command-line flag of a region filter's pattern:
// --include and --exclude choose regions (what the command lists),
// --kernel-include and --kernel-exclude the launches they count.
func regionFlag(target, flag string) string {
	if target == regions.TargetKernel {
		return "--kernel-" + flag
	}
	return "--" + flag
}

func runRegions(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("regions", regionsSynopsis, stdout)
	format := fs.String("format", "", fmt.Sprintf(formatHelp, "report.json"))
	var include, exclude, kinclude, kexclude stringList
	fs.Var(&include, "include", "list only regions whose name (stack path, e.g. decode_all/decode_step) matches this `regexp` (repeatable; any may match); their totals stay whole")
	fs.Var(&exclude, "exclude", "leave out regions whose name matches this `regexp` (repeatable; exclude wins over include)")
	fs.Var(&kinclude, "kernel-include", "count only launches of kernels whose name matches this `regexp` (repeatable; any may match)")
	fs.Var(&kexclude, "kernel-exclude", "leave out launches of kernels whose name matches this `regexp` (repeatable; exclude wins over include)")
	metrics := fs.String("metrics", regions.GroupNames(regions.DefaultGroups()),
		"comma-separated metric `groups` summarized per region, or none")
	top := fs.Int("top", regions.DefaultTopKernels, "list the `N` kernels with the most time in each region (0: all)")
	aggregate := fs.Bool("aggregate", true, "add the regions summed across every (process, device) scope")
	out := fs.String("out", "", "write report.md, report.json and one directory per region into `DIR` instead of printing")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if err := onePositional("regions", "FILE (or - for standard input)", pos); err != nil {
		return err
	}
	f, ferr := tableFormat(*format, stdout, true)
	if ferr != nil {
		return ferr
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("--top %d: must be 0 (all) or more", *top)}
	}
	cfg := regions.DefaultConfig()
	cfg.RegionInclude, cfg.RegionExclude = include, exclude
	cfg.Include, cfg.Exclude = kinclude, kexclude
	cfg.RequireMatches = true // a filter that matches nothing is a mistake, not an empty report
	cfg.Aggregate = *aggregate
	cfg.TopKernels = *top
	cfg.Groups = []regions.Group{}
	if m := strings.TrimSpace(*metrics); m != "" && m != "none" {
		names := strings.Split(m, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
		if cfg.Groups, err = regions.SelectGroups(regions.DefaultGroups(), names); err != nil {
			return &usageError{"--metrics: " + err.Error()}
		}
	}
	// Compile the patterns before reading anything.
	if _, err := regions.New(cfg); err != nil {
		var pe *regions.PatternError
		if errors.As(err, &pe) {
			return &usageError{fmt.Sprintf("%s %q: not a valid regular expression: %v", regionFlag(pe.Target, pe.Flag), pe.Pattern, pe.Err)}
		}
		return err
	}
	r, name, closeFn, err := openInput(pos[0], stdin)
	if err != nil {
		return err
	}
	defer closeFn()
	rep, err := regions.FromReader(ncu.NewReader(r, name, ncu.Options{Metrics: regions.RawMetrics(cfg.Groups)}), name, cfg)
	if ue := (*regions.UnmatchedError)(nil); errors.As(err, &ue) {
		return unmatchedFilters(ue)
	}
	if err != nil {
		return err
	}
	if *out != "" {
		return harness.WriteRegionsOut(*out, rep)
	}
	switch f {
	case "json":
		return render.RegionsJSON(stdout, rep)
	case "csv":
		return render.RegionsCSV(stdout, rep)
	}
	return writeMarkdown(stdout, f, func(w io.Writer) error { return render.RegionsMarkdownAlone(w, rep) })
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
