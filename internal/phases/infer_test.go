package phases_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// phaseTotals are a timeline's kernels by the phase whose range holds
// them (the nearest enclosing range named prefill or decode_all), in ms,
// and the instances of each range name.
func phaseTotals(tl *timeline.Timeline) (ms map[string]float64, instances map[string]int) {
	ms, instances = map[string]float64{}, map[string]int{}
	for _, p := range tl.Processes {
		for _, r := range p.Ranges {
			instances[r.Name]++
		}
		for i := range p.Kernels {
			k := p.Kernel(i)
			for r := k.Range; r != nil; r = r.Parent {
				if r.Name == phases.InferredPrefill || r.Name == phases.InferredDecode {
					ms[r.Name] += float64(k.End-k.Start) / 1e6
					break
				}
			}
		}
	}
	return ms, instances
}

// TestInferPhases (issue 39): recorded programs whose phases are known
// (NVTX ranges by hand, or deepprof's automatic ones), their ranges left
// out (a SYNTHETIC derived recording, synth.WithoutNVTX): the phases found
// in the kernel stream alone are theirs: as many prefills and decode steps
// a generate, and each phase's kernel time an instance within 5 % (10 %
// for the prefill: an inferred step is a token's forward pass and its
// sampling, so the prefill holds the first token's sampling, which a range
// pushed around the forward pass leaves out).
// deepprof's own workload runs a warm-up generate outside its ranges: the
// stream shows it as one generate more. A mixture of experts' prefill
// launches more than a step (its routing): the pass of one step's launches
// before the steps holds only part of it, and its steps are found within
// one a generate (the limits the notes and docs/any-program.md give).
func TestInferPhases(t *testing.T) {
	for _, c := range []struct {
		run     string
		warmups int
		moe     bool
	}{
		{"h200-generate-auto-ranges", 0, false}, {"h200-generate-by-hand", 0, false}, {"h200-warmup-lm", 0, false},
		{"h200-default-tiny-llama", 1, false}, {"cupti-tiny-llama", 1, false}, {"moe-h100", 0, true},
	} {
		run := c.run
		t.Run(run, func(t *testing.T) {
			files, err := filepath.Glob("../../fixtures/runs/" + run + "/timeline/cupti/cupti-*.tsv.gz")
			require.NoError(t, err)
			require.Len(t, files, 1)
			f, err := os.Open(files[0])
			require.NoError(t, err)
			defer f.Close()
			zr, err := gzip.NewReader(f)
			require.NoError(t, err)
			rec, err := io.ReadAll(zr)
			require.NoError(t, err)
			plain := filepath.Join(t.TempDir(), filepath.Base(files[0][:len(files[0])-3]))
			require.NoError(t, os.WriteFile(plain, synth.WithoutNVTX(rec), 0o644))

			known, err := timeline.ReadFiles(files[0])
			require.NoError(t, err)
			found, err := timeline.ReadFiles(plain)
			require.NoError(t, err)
			notes, ok := phases.InferPhases(found, "")
			require.True(t, ok)
			require.Len(t, notes, 1)
			t.Log(notes[0])

			wantMS, wantI := phaseTotals(known)
			gotMS, gotI := phaseTotals(found)
			t.Logf("known: %v %v", wantMS, wantI)
			t.Logf("found: %v %v", gotMS, gotI)
			generates := wantI[phases.InferredDecode]
			require.Positive(t, generates)
			for _, name := range []string{phases.InferredPrefill, phases.InferredDecode} {
				assert.Equal(t, wantI[name]+c.warmups, gotI[name], "%s instances", name)
				if name == phases.InferredPrefill && c.moe {
					continue
				}
				tol := 0.05
				if name == phases.InferredPrefill {
					tol = 0.10 // it holds the first token's sampling too
				}
				assert.InEpsilon(t, wantMS[name]/float64(wantI[name]), gotMS[name]/float64(gotI[name]), tol, "%s kernel ms an instance", name)
			}
			steps := float64(gotI[phases.InferredStep]) / float64(gotI[phases.InferredDecode])
			if c.moe {
				assert.InDelta(t, float64(wantI[phases.InferredStep])/float64(generates), steps, 1, "decode steps a generate")
			} else {
				assert.Equal(t, float64(wantI[phases.InferredStep]/generates), steps, "decode steps a generate")
			}
		})
	}
}

// TestInferPhasesNone: programs with no decode loop to find keep their
// whole-program view, and the note says why: a CUDA C++ program whose
// launches do not repeat, and a Python loop of 4 layers with no kernel
// that runs once a step (its whole generates repeat, its steps cannot be
// told apart).
func TestInferPhasesNone(t *testing.T) {
	for run, why := range map[string]string{
		"any-cuda-cpp": "no sequence of 8 launches or more repeats 3 times or more",
		"any-no-nvtx":  "no kernel runs once a step to tell the steps apart",
	} {
		files, err := filepath.Glob("../../fixtures/runs/" + run + "/timeline/cupti/cupti-*.tsv.gz")
		require.NoError(t, err)
		tl, err := timeline.ReadFiles(files...)
		require.NoError(t, err)
		notes, ok := phases.InferPhases(tl, "no-such-domain") // the C++ program's own ranges left aside
		assert.False(t, ok, run)
		require.Len(t, notes, 1, run)
		assert.Contains(t, notes[0], why, run)
		assert.Contains(t, notes[0], "the whole program is its one stage", run)
		for _, p := range tl.Processes {
			for _, r := range p.Ranges {
				assert.NotEqual(t, "no-such-domain", r.Domain, "no range added: %s", run)
			}
		}
	}
}

// decodeProgram is SYNTHETIC: a program with no NVTX range, on thread 1: a
// build (three launches of an autotuning kernel, then one of the step's
// first kernel, s0, as a compiler's autotuning runs it), a prefill of the
// step's eight kernels on 16 blocks each, five decode steps of them on
// one block, the host waiting 1 µs before each, and a last kernel after.
func decodeProgram(t *testing.T) *timeline.Timeline {
	var recs []cupti.Record
	at, corr := int64(1000), uint32(0)
	launch := func(name string, grid uint32, ns int64) {
		corr++
		recs = append(recs,
			&cupti.API{Start: at, End: at + 5, Thread: 1, Correlation: corr, Kind: cupti.APIRuntime, CBID: 211, Function: "cudaLaunchKernel"},
			&cupti.KernelRecord{Start: at + 10, End: at + 10 + ns, Context: 1, Stream: 7, Correlation: corr,
				Grid: cupti.Dim3{X: grid, Y: 1, Z: 1}, Block: cupti.Dim3{X: 128, Y: 1, Z: 1}, Mangled: name, Demangled: name})
		at += 100 + ns
	}
	for range 3 {
		launch("autotune", 1, 10000)
	}
	launch("s0", 1, 20)
	pass := func(grid uint32) {
		at += 1000
		for i := range 8 {
			launch(fmt.Sprintf("s%d", i), grid, 20)
		}
	}
	pass(16)
	for range 5 {
		pass(1)
	}
	launch("teardown", 1, 50)
	return records(t, map[int64][]cupti.Record{100: recs})
}

// TestFindInferred (issue 54): the launches inside the phases inferred
// from the kernel stream, found without adding them: the prefill and the
// steps, not the build before them (an autotuning kernel, and s0 as it
// tunes it) nor the kernel after; once InferPhases has added the ranges,
// they are the launches the inferred ranges hold (model.InRanges). A deep
// pass's targets within them (TargetsWithin) count no launch outside as a
// candidate, and say that s0's configuration of one block was first
// launched outside them.
func TestFindInferred(t *testing.T) {
	tl := decodeProgram(t)
	in := phases.FindInferred(tl, "")
	require.Len(t, in, 1)
	var inside []string
	n := 0
	for l := range tl.Launches() {
		n++
		if in.Has(l) {
			inside = append(inside, l.Kernel)
		}
	}
	assert.Equal(t, 3+1+6*8+1, n)
	assert.Len(t, inside, 6*8, "the prefill and five steps")
	assert.NotContains(t, inside, "autotune")
	assert.NotContains(t, inside, "teardown")
	for _, p := range tl.Processes {
		assert.Empty(t, p.Ranges, "no range added")
	}

	within := phases.TargetsWithin(tl, []string{"s0"}, in.Has)
	all := phases.Targets(tl, []string{"s0"}, in.Has)
	require.Len(t, within, 1)
	require.Len(t, all, 1)
	assert.Equal(t, []int32{-1, 0, 1, 1, 1, 1, 1}, within[0].Order, "the build's launch is no candidate; then 16 blocks, then 1")
	assert.Equal(t, []int32{0, 1, 0, 0, 0, 0, 0}, all[0].Order, "by configuration alone the build's launch is one block's first")
	assert.Equal(t, 1, within[0].FirstOutside, "one block: first launched in the build")
	assert.Equal(t, 1, all[0].FirstOutside)
	assert.Equal(t, 2, within[0].Configs)
	assert.Equal(t, within[0].NS, all[0].NS, "the time of the launches inside")

	var inc [][]model.Range
	for _, r := range phases.InferredRanges() {
		inc = append(inc, []model.Range{{Name: r}})
	}
	notes, ok := phases.InferPhases(tl, "")
	require.True(t, ok, notes)
	var ranged []string
	for l := range tl.Launches() {
		if model.InRanges(l, inc) {
			ranged = append(ranged, l.Kernel)
		}
	}
	assert.Equal(t, inside, ranged, "the launches the inferred ranges hold")
	assert.Empty(t, phases.FindInferred(tl, ""), "inferred already: a range of the domain")
}

// TestFindInferredRecorded (issue 54): on recorded programs with no NVTX
// range (a CUDA C++ decode loop; a JAX decode, whose XLA autotuning runs
// before its first phase), the launches FindInferred finds are those the
// inferred ranges hold once InferPhases has added them.
func TestFindInferredRecorded(t *testing.T) {
	for _, run := range []string{"h200-cpp-decode-loop", "corpus-jax"} {
		files, err := filepath.Glob("../../fixtures/runs/" + run + "/timeline/cupti/cupti-*.tsv.gz")
		require.NoError(t, err)
		tl, err := timeline.ReadFiles(files...)
		require.NoError(t, err)
		in := phases.FindInferred(tl, "")
		require.NotEmpty(t, in, run)
		var want []bool
		for l := range tl.Launches() {
			want = append(want, in.Has(l))
		}
		_, ok := phases.InferPhases(tl, "")
		require.True(t, ok, run)
		var inc [][]model.Range
		for _, r := range phases.InferredRanges() {
			inc = append(inc, []model.Range{{Name: r}})
		}
		var got []bool
		inside := 0
		for l := range tl.Launches() {
			got = append(got, model.InRanges(l, inc))
			if model.InRanges(l, inc) {
				inside++
			}
		}
		assert.Equal(t, want, got, run)
		assert.Positive(t, inside, run)
		assert.Less(t, inside, len(got), "%s: the build is outside", run)
	}
}
