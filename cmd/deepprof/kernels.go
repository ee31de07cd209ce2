package main

import (
	"fmt"
	"io"
	"os"

	"github.com/llm-perf-opt/deepprof/harness"
)

func runKernels(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("kernels", "kernels [--top N] [--format text|md|json|csv] FILE|-", stdout)
	top := fs.Int("top", 0, "show the `N` kernels with the most total time (0: all)")
	format := fs.String("format", "", fmt.Sprintf(formatHelp, "kernels.json"))
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if err := onePositional("kernels", "FILE (or - for standard input)", pos); err != nil {
		return err
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("--top %d: must be 0 (all) or more", *top)}
	}
	f, err := tableFormat(*format, stdout, true)
	if err != nil {
		return err
	}
	r, name, closeFn, err := openInput(pos[0], stdin)
	if err != nil {
		return err
	}
	defer closeFn()
	return harness.Kernels(r, name, harness.KernelsOptions{TableOptions: tableOptions(f, stdout), Top: *top}, stdout)
}

// openInput opens FILE, or standard input for "-".
func openInput(path string, stdin io.Reader) (io.Reader, string, func() error, error) {
	if path == "-" {
		return stdin, "<stdin>", func() error { return nil }, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, "", nil, fmt.Errorf("%s: a folder, not an export: give one ncu CSV export (a run directory's ncu/raw.csv, for one), or - for standard input", path)
	}
	return f, path, f.Close, nil
}
