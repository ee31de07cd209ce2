package harness_test

import (
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the import path every package of deepprof starts with.
const module = "github.com/llm-perf-opt/deepprof"

// layers is the allow-list of the module's imports, bottom first: a package
// may import packages of lower layers only (none of its own layer). Every
// package of the module is in it; one that is not fails TestLayers, so a
// new package is placed on purpose.
var layers = [][]string{
	// 0: the public data (summary.json's schema, the analysed facts and
	// the kernel table, ranges, devices they are made of); it imports
	// nothing of deepprof
	{"facts"},
	// 1: the shared vocabulary, input helpers, the machine, what the binary
	// embeds (the default profiles, the default workload script)
	{"internal/model", "internal/input", "internal/machine", "."},
	// 2: readers (a tool's bytes to the model) and the run directory
	{"internal/ncu", "internal/nsys", "internal/cupti", "internal/workload", "internal/rundir"},
	// 3: the CUPTI timeline (records to attributed launches)
	{"internal/timeline"},
	// 4: analyses of launches
	{"internal/kernels", "internal/regions", "internal/phases"},
	// 5: the profile, run against run, the summary's numbers
	{"internal/config", "internal/compare", "internal/summary"},
	// 6: rendering
	{"internal/render"},
	// 7: the rebuild (load, analyse, render, commit); synthetic inputs for
	// tests
	{"internal/rebuild", "internal/synth"},
	// 8: the session that runs the profilers, then the rebuild
	{"internal/session"},
	// 9: the facade
	{"harness"},
	// 10: the command, the test API, the repository's scripts
	{"cmd/deepprof", "deepproftest", "scripts/fixtures/mark-partial", "scripts/fixtures/mark-run", "scripts/fixtures/rederive", "scripts/synth"},
}

// TestLayers holds every package of the module (its non-test imports) to
// layers, the way Go's own go/build/deps_test.go holds the standard library.
func TestLayers(t *testing.T) {
	t.Parallel()
	graph := moduleImports(t, "..")
	require.Contains(t, graph, "harness", "the walk finds the module's packages")
	for _, err := range checkLayers(layers, graph) {
		t.Error(err)
	}
}

// TestLayersRefuseAnUpwardImport: the check fails an import of a higher
// layer, one of the same layer and a package that is in no layer.
func TestLayersRefuseAnUpwardImport(t *testing.T) {
	t.Parallel()
	graph := map[string][]string{
		"internal/model":   {"internal/render"},  // up
		"internal/kernels": {"internal/regions"}, // sideways
		"internal/ncu":     {"internal/model"},   // down: fine
		"internal/new":     nil,                  // placed nowhere
		"internal/config":  {"internal/newer"},   // imports a package placed nowhere
	}
	var msgs []string
	for _, err := range checkLayers(layers, graph) {
		msgs = append(msgs, err.Error())
	}
	assert.ElementsMatch(t, []string{
		"internal/model (layer 1) imports internal/render (layer 6): a package imports lower layers only",
		"internal/kernels (layer 4) imports internal/regions (layer 4): a package imports lower layers only",
		"internal/new is in no layer: place it in layers (harness/layers_test.go)",
		"internal/config (layer 5) imports internal/newer, which is in no layer: place it in layers (harness/layers_test.go)",
	}, msgs)
}

// checkLayers returns an error for each import of graph (package -> its
// module imports, paths relative to the module) that layers does not
// allow, and for each package it does not place.
func checkLayers(layers [][]string, graph map[string][]string) []error {
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	var errs []error
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		lp, ok := layerOf[p]
		if !ok {
			errs = append(errs, fmt.Errorf("%s is in no layer: place it in layers (harness/layers_test.go)", p))
			continue
		}
		for _, q := range graph[p] {
			lq, ok := layerOf[q]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("%s (layer %d) imports %s, which is in no layer: place it in layers (harness/layers_test.go)", p, lp, q))
			case lq >= lp:
				errs = append(errs, fmt.Errorf("%s (layer %d) imports %s (layer %d): a package imports lower layers only", p, lp, q, lq))
			}
		}
	}
	return errs
}

// moduleImports reads the import lines of every package under root (the
// module's root; examples/ is a module of its own), test files left out,
// as paths relative to the module: of every file, whatever its build tags
// and GOOS (a file built only for another system imports too).
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch name := d.Name(); {
		case rel == "examples", name == "testdata", rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")):
			return filepath.SkipDir
		}
		ctx := build.Default
		ctx.UseAllFiles = true // every GOOS and build tag
		p, err := ctx.ImportDir(path, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return fmt.Errorf("%s: %w", rel, err)
		}
		var imps []string
		for _, imp := range p.Imports {
			if imp == module {
				imps = append(imps, ".")
			} else if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				imps = append(imps, r)
			}
		}
		graph[rel] = imps
		return nil
	}))
	return graph
}

// TestLayersReadEveryGOOS (issue 37): an upward import in a file built
// only for another system (here //go:build windows, and a _plan9 file) is
// read and refused like any other.
func TestLayersReadEveryGOOS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("internal/model/model.go", "package model\n")
	write("internal/model/other_windows.go", "//go:build windows\n\npackage model\n\nimport _ \""+module+"/internal/render\"\n")
	write("internal/ncu/ncu_plan9.go", "package ncu\n\nimport _ \""+module+"/internal/session\"\n")
	write("internal/render/render.go", "package render\n")
	write("internal/session/session.go", "package session\n")
	graph := moduleImports(t, root)
	assert.Equal(t, []string{"internal/render"}, graph["internal/model"])
	assert.Equal(t, []string{"internal/session"}, graph["internal/ncu"])
	var msgs []string
	for _, err := range checkLayers(layers, graph) {
		msgs = append(msgs, err.Error())
	}
	assert.Contains(t, msgs, "internal/model (layer 1) imports internal/render (layer 6): a package imports lower layers only")
	assert.Contains(t, msgs, "internal/ncu (layer 2) imports internal/session (layer 8): a package imports lower layers only")
}
