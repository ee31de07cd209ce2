package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestNotARunIsRefused (issue 53): a folder deepprof did not make that
// holds a manifest.json with a run id, a person's files named as a run's
// (kernels.md, report.md, charts/top_kernels.svg, ncu/regions/...,
// my_notes.txt) and copies of a recorded run's kernels.json, summary.json,
// stage 1 report and config.yaml is no run for any command, by one
// detection (its mark, rundir.Open): report, baseline, diff (either side)
// and merge exit 2 with one line saying what it lacks and that deepprof
// profile makes run directories, and every file in it is as it was, byte
// for byte. report took it for a run, removed the derived-named files and
// rewrote the manifest; baseline and diff compared its copies.
func TestNotARunIsRefused(t *testing.T) {
	t.Parallel()
	dir := synth.NotARun(t, tinyRun)
	before := synth.Tree(t, dir)
	merged := filepath.Join(t.TempDir(), "merged")
	want := dir + ": not a run directory: no .deepprof-run, the mark deepprof profile writes into every run directory it makes (deepprof writes and removes files only in those)"
	for _, args := range [][]string{
		{"report", dir},
		{"report", "--top", "3", dir},
		{"baseline", dir},
		{"baseline", "--allow-partial", dir},
		{"diff", tinyRun, dir},
		{"diff", "--allow-partial", "--allow-mismatch", dir, tinyRun},
		{"merge", "--out", merged, dir, dir},
	} {
		stdout, stderr, err := runCmd(args, "")
		assert.Empty(t, synth.Changed(before, synth.Tree(t, dir)), "%v: nothing written into the folder, nothing removed", args)
		if !assert.Error(t, err, args) {
			continue
		}
		assert.Equal(t, 2, exitCode(err), args)
		assert.Equal(t, want, oneLine(err), args)
		assert.Empty(t, stdout, args)
		assert.Empty(t, stderr, args)
	}
	assert.NoDirExists(t, merged, "no merged run made of it")
}
