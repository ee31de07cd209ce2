package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness"
)

// stringList is a flag that may be given many times.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

const regionsSynopsis = "regions [--format text|md|json|csv] [--include RE]... [--exclude RE]... [--kernel-include RE]... [--kernel-exclude RE]... [--metrics GROUPS] [--top N] [--aggregate=false] [--out DIR] FILE|-"

func runRegions(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("regions", regionsSynopsis, stdout)
	format := fs.String("format", "", fmt.Sprintf(formatHelp, "report.json"))
	var include, exclude, kinclude, kexclude stringList
	fs.Var(&include, "include", "list only regions whose name (stack path, e.g. decode_all/decode_step) matches this `regexp` (repeatable; any may match); their totals stay whole")
	fs.Var(&exclude, "exclude", "leave out regions whose name matches this `regexp` (repeatable; exclude wins over include)")
	fs.Var(&kinclude, "kernel-include", "count only launches of kernels whose name matches this `regexp` (repeatable; any may match)")
	fs.Var(&kexclude, "kernel-exclude", "leave out launches of kernels whose name matches this `regexp` (repeatable; exclude wins over include)")
	metrics := fs.String("metrics", harness.DefaultRegionMetrics(),
		"comma-separated metric `groups` summarized per region, or none")
	top := fs.Int("top", harness.DefaultRegionTop, "list the `N` kernels with the most time in each region (0: all)")
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
	m := *metrics
	if strings.TrimSpace(m) == "" {
		m = "none"
	}
	o := harness.RegionsOptions{TableOptions: tableOptions(f, stdout),
		Include: include, Exclude: exclude, KernelInclude: kinclude, KernelExclude: kexclude,
		Metrics: m, Top: *top, NoAggregate: !*aggregate, Out: *out}
	// The patterns and groups are checked before anything is read.
	err = o.Check()
	if err == nil {
		var r io.Reader
		var name string
		var closeFn func() error
		if r, name, closeFn, err = openInput(pos[0], stdin); err != nil {
			return err
		}
		defer closeFn()
		err = harness.Regions(r, name, o, stdout)
		if err == nil && *out != "" {
			fmt.Fprintf(stdout, "%s: report.md, report.json and a folder per region written\n", *out)
		}
	}
	if oe := (*harness.OptionError)(nil); errors.As(err, &oe) {
		return &usageError{oe.Msg}
	}
	return err
}
