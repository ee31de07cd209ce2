package compare_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/compare"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestBaselineOfRuns (issue 51): the baseline of the recorded lease pair,
// one workload in two processes on two leases of an H200, keeps lease 1's
// figures and each stage's and kept kernel's spread between the two. Either
// run checked against it is within that spread: noise, no host move, and
// nothing fails even when the host is gated.
func TestBaselineOfRuns(t *testing.T) {
	t.Parallel()
	one, err := compare.FromRun(lease1)
	require.NoError(t, err)
	pair, err := compare.FromRuns([]string{lease1, lease2}, compare.DefaultTop, false)
	require.NoError(t, err)
	require.NotNil(t, pair.BetweenRuns)
	a, b := load(t, lease1), load(t, lease2)
	assert.Equal(t, []string{a.RunID, b.RunID}, pair.BetweenRuns.Runs)
	withoutRuns := *pair
	withoutRuns.BetweenRuns = nil
	assert.Equal(t, one, &withoutRuns, "lease 1's figures")

	require.Len(t, pair.BetweenRuns.Stages, 2)
	for i, st := range pair.BetweenRuns.Stages {
		assert.Equal(t, a.Stages[i].Name, st.Stage)
		assert.Equal(t, model.Between{N: 2, MinMS: a.Stages[i].MeanMS, MaxMS: b.Stages[i].MeanMS}, st.Between, "lease 2 the slower: %s", st.Stage)
	}
	require.Len(t, pair.BetweenRuns.Kernels, len(pair.Kernels.Rows), "every kept kernel is in both runs' lists")
	for i, k := range pair.BetweenRuns.Kernels {
		assert.Equal(t, pair.Kernels.Rows[i].Name, k.Name)
		assert.Equal(t, 2, k.N)
		assert.LessOrEqual(t, k.MinMS, pair.Kernels.Rows[i].TotalMS)
		assert.GreaterOrEqual(t, k.MaxMS, pair.Kernels.Rows[i].TotalMS)
	}
	roundTrip(t, pair)

	gated := model.DefaultTolerances()
	gated.Gate = model.GateHost
	for _, dir := range []string{lease1, lease2} {
		run, err := compare.FromRun(dir)
		require.NoError(t, err)
		for _, tol := range []model.Tolerances{model.DefaultTolerances(), gated} {
			r, err := compare.CompareBaseline(pair, run, tol)
			require.NoError(t, err)
			assert.False(t, r.Regression, "%s, gate %q: %v", dir, tol.Gate, r.Regressions)
			assert.Empty(t, r.HostMoves, dir)
			for _, st := range r.Stages {
				require.NotNil(t, st.Between, st.Name)
				assert.Contains(t, []facts.Verdict{facts.Unchanged, facts.Noise}, st.Verdict, st.Name)
				assert.Equal(t, st.Verdict == facts.Noise, st.WithinRuns, "%s: noise by the spread between runs alone", st.Name)
			}
			for _, m := range r.MFU {
				assert.NotEqual(t, facts.Regression, m.Verdict, "MFU %s restates a stage within the runs", m.Name)
			}
		}
	}
}

// TestBaselineOfRunsBeyond (issue 51): against the lease pair's baseline, a
// change beyond the spread between the runs still counts. SYNTHETIC runs
// from lease 2, the slower: its three top kernels 30 % slower fail, each
// named; its decode's wall 3 % slower (past the spread's edge, within the
// threshold of it) is noise; 50 % slower is the host's, failing when the
// host is gated.
func TestBaselineOfRunsBeyond(t *testing.T) {
	t.Parallel()
	pair, err := compare.FromRuns([]string{lease1, lease2}, compare.DefaultTop, false)
	require.NoError(t, err)
	top := synth.Read(t, lease2).Kernels[:3]
	slowed, err := compare.FromRun(synth.Run(t, lease2, synth.ScaleKernel(0, 1.3), synth.ScaleKernel(1, 1.3), synth.ScaleKernel(2, 1.3)))
	require.NoError(t, err)
	r, err := compare.CompareBaseline(pair, slowed, model.DefaultTolerances())
	require.NoError(t, err)
	assert.True(t, r.Regression)
	require.Len(t, r.Regressions, 3, "%v", r.Regressions)
	for i, k := range top {
		assert.True(t, strings.HasPrefix(r.Regressions[i], "kernel "+k.Name+" (device 0)"), r.Regressions[i])
	}

	gated := model.DefaultTolerances()
	gated.Gate = model.GateHost
	for _, c := range []struct {
		f                 float64
		verdict, gatedOne facts.Verdict
	}{
		{1.03, facts.Noise, facts.Noise},
		{1.5, facts.Host, facts.Regression},
	} {
		run, err := compare.FromRun(synth.Run(t, lease2, synth.ScaleStage("decode", c.f)))
		require.NoError(t, err)
		for _, tc := range []struct {
			tol  model.Tolerances
			want facts.Verdict
		}{{model.DefaultTolerances(), c.verdict}, {gated, c.gatedOne}} {
			r, err := compare.CompareBaseline(pair, run, tc.tol)
			require.NoError(t, err)
			var dec facts.DiffStage
			for _, st := range r.Stages {
				if st.Name == "decode" {
					dec = st
				}
			}
			assert.Equal(t, tc.want, dec.Verdict, "decode ×%g, gate %q", c.f, tc.tol.Gate)
			assert.Equal(t, c.verdict == facts.Noise, dec.WithinRuns, "decode ×%g", c.f)
			assert.Equal(t, tc.want == facts.Regression, r.Regression, "decode ×%g, gate %q: %v", c.f, tc.tol.Gate, r.Regressions)
		}
	}
}

// TestBaselineOfRunsRefused: runs of two programs, and one run named twice,
// make no baseline of several runs; one run makes FromRun's.
func TestBaselineOfRunsRefused(t *testing.T) {
	t.Parallel()
	_, err := compare.FromRuns([]string{lease1, baselineLlama}, compare.DefaultTop, false)
	require.ErrorIs(t, err, compare.ErrNotOneProgram)
	assert.Contains(t, err.Error(), baselineLlama+": not several runs of one program: run A is of tiny-llama and run B of")
	_, err = compare.FromRuns([]string{lease1, lease2, lease1}, compare.DefaultTop, false)
	require.ErrorIs(t, err, compare.ErrNotOneProgram)
	assert.Contains(t, err.Error(), "name each run once")

	one, err := compare.FromRuns([]string{lease1}, 5, false)
	require.NoError(t, err)
	want, err := compare.FromRunTop(lease1, 5)
	require.NoError(t, err)
	assert.Equal(t, want, one)
	assert.Nil(t, one.BetweenRuns)
}
