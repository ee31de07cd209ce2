package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/render"
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
	t, err := ncu.KernelTable(ncu.NewReader(r, name, ncu.Options{}), name)
	if err != nil {
		return err
	}
	t = t.Top(*top)
	switch f {
	case "json":
		return render.KernelsJSON(stdout, t, nil, nil)
	case "csv":
		return render.KernelsCSV(stdout, t)
	}
	if f == "text" {
		t = displayNamed(t)
	}
	return writeMarkdown(stdout, f, func(w io.Writer) error { return render.KernelsMarkdown(w, t) })
}

// displayNamed is t with each kernel under its display name
// (facts.DisplayNames: its function, and what tells its instances
// apart), for a terminal: the Markdown and JSON keep the full names.
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

// openInput opens FILE, or standard input for "-".
func openInput(path string, stdin io.Reader) (io.Reader, string, func() error, error) {
	if path == "-" {
		return stdin, "<stdin>", func() error { return nil }, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, err
	}
	return f, path, f.Close, nil
}
