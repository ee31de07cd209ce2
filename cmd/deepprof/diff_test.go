package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/synth"
)

const (
	tinyRun   = "../../fixtures/runs/tiny-llama"
	lease2Run = "../../fixtures/runs/tiny-llama-lease2"
	llamaRun  = "../../fixtures/runs/llama3-8b-roofline"
	gpt2Run   = "../../fixtures/runs/gpt2-llm-domain"
)

// TestDiffBaselineGoldens runs deepprof diff and deepprof baseline as main
// would, on the recorded runs and on SYNTHETIC copies of them (made by
// synth.Run, named synthetic-...), and compares both streams and the exit
// status with golden/cli/diff-* and baseline-*. The synthetic runs' temporary
// directory prints as TMP.
// Regenerate with: go test ./cmd/deepprof -run TestDiffBaselineGoldens -update
func TestDiffBaselineGoldens(t *testing.T) {
	t.Parallel()
	var tmp []string
	mk := func(edits ...synth.Edit) string {
		dir := synth.Run(t, tinyRun, edits...)
		tmp = append(tmp, filepath.Dir(dir))
		return dir
	}
	slowed := mk(synth.ScaleKernel(0, 1.5))
	renamed := mk(synth.RenameKernel(0, synth.Read(t, tinyRun).Kernels[0].Name+"_renamed"))
	noKernels := mk(synth.Remove("kernels.json"))
	// The recording warms up: a slow first decode repeat is made.
	warmup := mk(synth.ScaleRepeat("decode", 0, 10))
	noSummary := mk(synth.Remove("summary.json"))
	malformed := mk(synth.WriteFile("kernels.json", "{\n  \"kernels\": [\n    {\"kernel_name\": \"k\", \"total_ms\": 0.5},\n    {\"kernel_name\": \"k2\" \"total_ms\": 1}\n  ]\n}\n").As("malformed-kernels"))
	// The lease pair's baseline of two runs, as a file.
	var pairOut bytes.Buffer
	require.NoError(t, run([]string{"baseline", tinyRun, lease2Run}, strings.NewReader(""), &pairOut, &bytes.Buffer{}))
	pairBase := filepath.Join(t.TempDir(), "pair.json")
	require.NoError(t, os.WriteFile(pairBase, pairOut.Bytes(), 0o644))
	tmp = append(tmp, filepath.Dir(pairBase))
	tests := []struct {
		name string
		args []string
	}{
		{"diff-tiny-llama-itself-md", []string{"diff", "--format", "md", tinyRun, tinyRun}},
		{"diff-llama3-8b-itself-json", []string{"diff", "--format", "json", llamaRun, llamaRun}},
		{"diff-synthetic-kernel-slowed-md", []string{"diff", "--format", "md", tinyRun, slowed}},
		{"diff-synthetic-kernel-slowed-json", []string{"diff", tinyRun, slowed, "--format=json", "--threshold", "0.05"}},
		{"diff-synthetic-kernel-slowed-threshold-60", []string{"diff", "--format", "md", "--threshold", "60%", tinyRun, slowed}},
		{"diff-synthetic-kernel-renamed-md", []string{"diff", "--format", "md", tinyRun, renamed}},
		{"diff-synthetic-no-kernels-md", []string{"diff", "--format", "md", tinyRun, noKernels}},
		{"diff-synthetic-malformed-kernels", []string{"diff", tinyRun, malformed}},
		{"diff-synthetic-decode-warmup-md", []string{"diff", "--format", "md", tinyRun, warmup}},
		{"diff-synthetic-no-summary-md", []string{"diff", "--format", "md", tinyRun, noSummary}},
		{"diff-synthetic-no-summary-itself-md", []string{"diff", "--format", "md", noSummary, noSummary}},
		{"diff-gpt2-llm-domain-itself-md", []string{"diff", "--format", "md", gpt2Run, gpt2Run}},
		{"diff-tiny-llama-vs-llama3-8b-refused", []string{"diff", tinyRun, llamaRun}},
		{"diff-tiny-llama-vs-llama3-8b-md", []string{"diff", "--format", "md", "--allow-mismatch", tinyRun, llamaRun}},
		// Two real sessions of one workload on two leases of an H200: the
		// host-bound stage times moved by half, the kernels by under 2%.
		{"diff-tiny-llama-vs-lease2-md", []string{"diff", "--format", "md", tinyRun, lease2Run}},
		{"diff-tiny-llama-vs-lease2-csv", []string{"diff", "--format", "csv", tinyRun, lease2Run}},
		// The baseline of both as A: lease 2's walls are within the
		// spread between the runs, noise, even with the host gated.
		{"diff-lease-pair-baseline-vs-lease2-md", []string{"diff", "--format", "md", "--gate", "host", pairBase, lease2Run}},
		{"diff-baseline-file-vs-run", []string{"diff", "../../golden/perf/tiny-llama.json", tinyRun}},
		{"diff-missing-run", []string{"diff", tinyRun, "no-such-run"}},
		{"diff-bad-threshold", []string{"diff", "--threshold", "5", tinyRun, tinyRun}},
		{"diff-one-run", []string{"diff", tinyRun}},
		{"diff-help", []string{"diff", "--help"}},
		{"baseline-tiny-llama", []string{"baseline", tinyRun}},
		{"baseline-llama3-8b-top3", []string{"baseline", "--top", "3", llamaRun}},
		{"baseline-synthetic-no-kernels", []string{"baseline", noKernels}},
		{"baseline-lease-pair-top3", []string{"baseline", "--top", "3", tinyRun, lease2Run}},
		{"baseline-tiny-llama-and-llama3-8b-refused", []string{"baseline", tinyRun, llamaRun}},
		{"baseline-no-run", []string{"baseline"}},
		{"baseline-help", []string{"baseline", "--help"}},
	}
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/cli"), goldie.WithNameSuffix(""))
	norm := func(b []byte) []byte {
		for _, d := range tmp {
			b = bytes.ReplaceAll(b, []byte(d), []byte("TMP"))
		}
		return b
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(tt.args, strings.NewReader(""), &stdout, &stderr)
			code := 0
			if err != nil {
				code = exitCode(err)
				if err != errUsageShown {
					fmt.Fprintf(&stderr, "deepprof: %s\n", oneLine(err))
				}
			}
			g.Assert(t, tt.name+".stdout", norm(stdout.Bytes()))
			g.Assert(t, tt.name+".stderr", norm(fmt.Appendf(stderr.Bytes(), "exit status %d\n", code)))
		})
	}
}

// TestDiffRecordedMFU: the recorded runs have summary.json with MFU, and
// deepprof diff of a run with itself prints each figure it has as unchanged.
func TestDiffRecordedMFU(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{tinyRun, llamaRun, gpt2Run} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			rec := synth.Read(t, dir)
			out, _, err := runCmd([]string{"diff", "--format", "md", dir, dir}, "")
			require.NoError(t, err)
			_, mfu, ok := strings.Cut(out, "\n## MFU\n")
			require.True(t, ok, out)
			rows := map[string]string{}
			for _, line := range strings.Split(mfu, "\n") {
				for _, name := range []string{"model", "prefill", "decode"} {
					if strings.HasPrefix(line, "| "+name+" |") {
						rows[name] = line
					}
				}
			}
			require.Len(t, rows, 3, mfu)
			for name, row := range rows {
				if rec.MFUFigure(name) == nil {
					assert.Contains(t, row, "| n/a: A's mfu."+name+" is null; B's mfu."+name+" is null |", "null in summary.json")
					continue
				}
				assert.True(t, strings.HasSuffix(row, "| +0.0% | unchanged |"), row)
				assert.NotContains(t, row, "n/a", row)
			}
		})
	}
	require.NotNil(t, synth.Read(t, tinyRun).MFU, "tiny-llama's recording has MFU")
}

func TestDiffExitStatus(t *testing.T) {
	t.Parallel()
	// A SYNTHETIC run: llama3-8b with its fourth kernel 1.2x slower.
	k := synth.Read(t, llamaRun).Kernels[3]
	slowed := synth.Run(t, llamaRun, synth.ScaleKernel(3, 1.2))
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"diff", llamaRun, llamaRun}, 0, ""},
		{[]string{"diff", llamaRun, slowed}, 1, fmt.Sprintf("regression: kernel %s (device %d): ", k.Name, k.Device)},
		{[]string{"diff", llamaRun, slowed}, 1, " ms total (+20.0%)"},
		{[]string{"diff", "--threshold", "25%", llamaRun, slowed}, 0, ""},
		{[]string{"diff", slowed, llamaRun}, 0, ""}, // faster: an improvement
		{[]string{"diff", llamaRun, filepath.Join(slowed, "ncu")}, 2, "ncu: not a run directory: no .deepprof-run, the mark deepprof profile writes into every run directory it makes"},
		{[]string{"diff", llamaRun, filepath.Join(slowed, "nope")}, 2, "no such run directory or baseline file"},
		{[]string{"diff", "--format", "html", llamaRun, slowed}, 2, `--format "html"`},
		{[]string{"diff", "--threshold", "0.05.1", llamaRun, slowed}, 2, `--threshold "0.05.1"`},
		{[]string{"diff", "--threshold", "NaN", llamaRun, slowed}, 2, `--threshold "NaN"`},
		{[]string{"diff", "--thresh", "5%", llamaRun, slowed}, 2, ""},
		{[]string{"diff", llamaRun, slowed, slowed}, 2, "got 3 arguments"},
		{[]string{"baseline", filepath.Join(slowed, "nope")}, 2, "nope: not a run directory: no such directory"},
		{[]string{"baseline", filepath.Join(slowed, "kernels.json")}, 2, "kernels.json: not a run directory: a file, not a directory"},
		{[]string{"baseline", "--top", "-1", llamaRun}, 2, "--top -1"},
	} {
		_, _, err := runCmd(c.args, "")
		if c.code == 0 {
			assert.NoError(t, err, c.args)
			continue
		}
		require.Error(t, err, c.args)
		assert.Equal(t, c.code, exitCode(err), c.args)
		assert.Contains(t, oneLine(err), c.msg, c.args)
	}
}

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, "12.5%": 0.125, "0": 0, "0%": 0, "150%": 1.5, " 10 % ": 0.1, ".2": 0.2} {
		got, err := parseThreshold(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, 1e-12, in)
	}
	for _, in := range []string{"5", "1", "-1%", "-0.1", "abc", "%", "", "Inf%", "5%%"} {
		_, err := parseThreshold(in)
		require.Error(t, err, in)
		assert.Equal(t, 2, exitCode(err), in)
	}
}

// TestDiffHiddenRunes (issue 16): a kernel named by a hostile program
// (SYNTHETIC: U+202E, NUL and a line break in the recorded run's fourth
// kernel) is printed escaped in diff's regression message, never raw: a
// terminal would reorder the message, or start a new line in it.
func TestDiffHiddenRunes(t *testing.T) {
	t.Parallel()
	name := synth.Read(t, llamaRun).Kernels[3].Name + "\u202e\x00\ndeepprof: all good"
	a := synth.Run(t, llamaRun, synth.RenameKernel(3, name))
	b := synth.Run(t, llamaRun, synth.RenameKernel(3, name), synth.ScaleKernel(3, 1.2))
	out, _, err := runCmd([]string{"diff", a, b}, "")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	for _, msg := range []string{err.Error(), oneLine(err)} {
		assert.NotContains(t, msg, "\u202e")
		assert.NotContains(t, msg, "\x00")
		assert.NotContains(t, msg, "\n")
		assert.Contains(t, msg, `\u202e\u0000\u000adeepprof: all good (device 0)`)
	}
	assert.NotContains(t, out, "\u202e", "the report on stdout")
	assert.NotContains(t, out, "\x00", "the report on stdout")
}

// TestDiffRefusesOtherShapes (issue 27): runs whose workload shape or
// kernel source differ are refused (exit 2), naming the difference, unless
// --allow-mismatch: a sample against every launch read as a -98 %
// "improvement", another prompt length as a +99 % MFU.
func TestDiffRefusesOtherShapes(t *testing.T) {
	t.Parallel()
	longer := synth.Run(t, tinyRun, synth.EditJSON("prompt-128", "stage1/report.json", func(m map[string]any) error {
		m["tokens"].(map[string]any)["prompt"] = 128
		return nil
	}))
	sampled := synth.Run(t, tinyRun, synth.EditJSON("kernels-sampled", "manifest.json", func(m map[string]any) error {
		k := m["sources"].(map[string]any)["kernels"].(map[string]any)
		k["path"], k["every_launch"] = "ncu/raw.csv", false
		return nil
	}))
	for _, c := range []struct {
		b, want string
	}{
		{longer, "run A's workload is prompt 64, generated 4, batch 1 and run B's prompt 128, generated 4, batch 1"},
		{sampled, "run A's kernels count every launch (ncu/timing-raw.csv) and run B's are the deep pass's sample (ncu/raw.csv)"},
	} {
		_, _, err := runCmd([]string{"diff", tinyRun, c.b}, "")
		require.Error(t, err)
		assert.Equal(t, 2, exitCode(err))
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "--allow-mismatch")
		_, _, err = runCmd([]string{"diff", "--allow-mismatch", tinyRun, c.b}, "")
		if err != nil {
			assert.NotContains(t, err.Error(), c.want, "asked for, the runs are compared")
		}
	}
}
