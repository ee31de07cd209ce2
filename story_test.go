package deepprof_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// TestRecordedRunsOneStory (issue 34) rebuilds every recorded run and
// checks, from its summary.json, that the figures tell one story: every
// phase row's busy time is at most its kernel time; a sub-stage's time per
// kept parent instance fits in the parent's mean; the kernel table's total
// in the profiled ranges and the time outside them make the whole run; a
// bandwidth or launch-bound claim stands on a figure that supports it;
// a phase's wall per steady instance is its stage's mean (within 10 %, or
// 5 µs: the stages are the CUPTI run's, as the phases are, wherever that
// run has phases); and
// the what-if ladder has a row for every top-level phase that ran kernels,
// with now ≥ GPU busy > 0.
func TestRecordedRunsOneStory(t *testing.T) {
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	var mu sync.Mutex
	kinds := map[string]int{}
	t.Run("runs", func(t *testing.T) {
		for _, src := range runs {
			t.Run(filepath.Base(src), func(t *testing.T) {
				t.Parallel()
				dir := rebuiltCopy(t, src)
				var s facts.Summary
				require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, rundir.SummaryJSON)), &s))
				checkStory(t, &s)
				mu.Lock()
				for _, c := range s.Narrative.Claims {
					kinds[c.Kind]++
				}
				mu.Unlock()
			})
		}
	})
	// Every kind of claim the recorded runs hold was checked above.
	for _, k := range []string{summary.ClaimLaunchBound, summary.ClaimNotBandwidthBound, summary.ClaimWarmup, "latency-bound"} {
		assert.Positive(t, kinds[k], "no recorded run makes a %s claim: %v", k, kinds)
	}
	t.Logf("claims checked, by kind: %v", kinds)
}

// checkClaim checks that a claim's figures support it, by its kind's rule.
func checkClaim(t *testing.T, c facts.Claim) {
	t.Helper()
	f := c.Figures
	switch c.Kind {
	case summary.ClaimLaunchBound:
		assert.Greater(t, f["idle_share"], f["threshold"], "%s is called launch-bound", c.Subject)
		assert.Positive(t, f["kernels"], "%s is called launch-bound with no kernel", c.Subject)
		assert.GreaterOrEqual(t, 2*f["gap_ms"], f["idle_ms"]-1e-9, "%s is called launch-bound: its gaps make half its idle", c.Subject)
	case summary.ClaimHostAhead:
		assert.Greater(t, f["idle_share"], f["threshold"], "%s is called host-ahead", c.Subject)
		assert.Less(t, 2*f["gap_ms"], f["idle_ms"], "%s is called host-ahead: its gaps make under half its idle", c.Subject)
		assert.GreaterOrEqual(t, f["launch_latency_median_us"], 100.0, "%s is called host-ahead: its launches wait in a queue", c.Subject)
	case summary.ClaimHostBound:
		assert.Less(t, f["gpu_busy_share"], f["threshold"], "%s is called host-bound", c.Subject)
	case summary.ClaimBandwidthBound:
		assert.GreaterOrEqual(t, f["mbu"], f["threshold"], "decode is called bandwidth-bound")
	case summary.ClaimNotBandwidthBound:
		assert.Less(t, f["mbu"], f["threshold"], "decode is called not bandwidth-bound")
	case summary.ClaimWarmup:
		assert.Greater(t, f["warmup_ms"], f["steady_ms"], "%s's first instance is called a warm-up", c.Subject)
	case "latency-bound":
		assert.Less(t, max(f["sm_pct"], f["memory_pct"]), f["threshold_pct"], "%s is called latency-bound", c.Subject)
		if share, ok := f["measured_share"]; ok {
			assert.GreaterOrEqual(t, share, f["min_measured_share"], "%s's bound is measured on enough of its time", c.Subject)
		}
	case "compute-bound":
		assert.GreaterOrEqual(t, max(f["sm_pct"], f["memory_pct"]), f["threshold_pct"])
		assert.GreaterOrEqual(t, f["sm_pct"], f["memory_pct"], "%s is called compute-bound", c.Subject)
	case "memory-bound":
		assert.GreaterOrEqual(t, max(f["sm_pct"], f["memory_pct"]), f["threshold_pct"])
		assert.Greater(t, f["memory_pct"], f["sm_pct"], "%s is called memory-bound", c.Subject)
	default:
		t.Errorf("a claim of a kind no rule checks: %q", c.Kind)
	}
}

func checkStory(t *testing.T, s *facts.Summary) {
	t.Helper()
	const eps = 1e-6
	// Busy never more than the phase's own kernel time.
	for _, r := range s.Phases.Rows {
		assert.LessOrEqual(t, r.BusyMS, r.KernelMS+eps, "%s: busy %.6f > kernel %.6f", r.Label(), r.BusyMS, r.KernelMS)
	}
	// A sub-stage's time inside the kept parent instances fits in them.
	// Each stage in the run the phases come from: the CUPTI run's own
	// repeats where the row's are the program alone's.
	byName := map[string]facts.Stage{}
	for _, st := range s.Stages.Rows {
		if st.Recorded != nil {
			st.StageTimes = *st.Recorded
		}
		byName[st.Name] = st
	}
	for _, row := range s.Stages.Rows {
		st := byName[row.Name]
		p, ok := byName[st.Parent]
		if st.Parent == "" || !ok || p.N == 0 || len(st.Processes) > 0 || len(p.Processes) > 0 {
			continue
		}
		inside := st.MeanMS * float64(st.N)
		if st.WarmupMS != nil {
			inside += *st.WarmupMS
		}
		assert.LessOrEqual(t, inside/float64(p.N), p.MeanMS*1.01+eps,
			"%s: %.3f ms per kept %s instance, against its mean %.3f ms", st.Name, inside/float64(p.N), p.Name, p.MeanMS)
	}
	// The stages are the run's the phases are (its ranges or its own
	// timers, not stage 1's), and a phase's wall per steady instance is
	// its stage's mean.
	if len(s.Phases.Rows) > 0 && s.Stages.Missing == "" {
		assert.NotEmpty(t, s.Stages.Source, "stages from the run the phases come from")
	}
	if s.Stages.Source != "" {
		for _, r := range s.Phases.Rows {
			st, ok := byName[r.Phase]
			if r.Nested || r.Instances == 0 || !ok || len(st.Processes) > 0 || st.N != r.Instances {
				continue
			}
			// (a span on the GPU runs on to its last kernel: a few µs
			// past a short range's CPU end)
			wall := summary.PerInstance(r, r.WallMS)
			if w := r.Warmup; w != nil && w.Steps > 0 {
				// a one-instance phase whose first steps are its warm-up:
				// the stage is the whole instance
				wall += w.WallMS
			}
			assert.InDelta(t, st.MeanMS, wall, max(0.10*st.MeanMS, 0.005), "%s: wall per steady instance against the stage's mean", r.Phase)
		}
	}
	// In the profiled ranges (steady state + warm-up) + outside them =
	// whole run.
	if k := s.Kernels; k.OutsideMS != nil {
		inRanges := k.TotalMS
		if k.Warmup != nil && k.Warmup.LeftOut {
			inRanges += k.Warmup.MS
		}
		assert.InDelta(t, s.Regions.TotalMS, inRanges+*k.OutsideMS, 1e-6)
		assert.Equal(t, facts.ScopeRanges, k.Scope)
	}
	if s.Kernels.Missing == "" {
		assert.Contains(t, []string{facts.ScopeRanges, facts.ScopeWholeRun}, s.Kernels.Scope)
	}
	// Claims stand on their figures.
	for _, c := range s.Narrative.Claims {
		checkClaim(t, c)
	}
	findings := strings.Join(s.Narrative.Lines, "\n")
	if strings.Contains(findings, "memory bandwidth, not FLOPs, limits") {
		require.NotNil(t, s.Serving.MBU, "a bandwidth claim needs an MBU")
		assert.GreaterOrEqual(t, *s.Serving.MBU, summary.BandwidthBoundMBU)
	}
	for _, r := range s.Narrative.LaunchBound {
		assert.Greater(t, r.Idle, s.Phases.LaunchBoundIdleShare, "%s is called launch-bound", r.Label())
	}
	// The what-if ladder: every top-level phase that ran kernels.
	ladder := map[[3]any]facts.WhatIfRow{}
	for _, w := range s.WhatIf.Rows {
		ladder[[3]any{w.ProcessID, w.Device, w.Phase}] = w
		assert.GreaterOrEqual(t, w.NowMS+eps, w.GPUBusyMS, "%s: now %.6f < busy %.6f", w.Phase, w.NowMS, w.GPUBusyMS)
		assert.Greater(t, w.GPUBusyMS, 0.0, w.Phase)
		for _, g := range w.Rungs {
			assert.GreaterOrEqual(t, g.SavesMS, 0.0)
		}
	}
	for _, r := range s.Phases.Rows {
		if r.Phase == "" || r.Nested || r.Kernels == 0 || r.Instances == 0 {
			continue
		}
		_, ok := ladder[[3]any{r.ProcessID, r.Device, r.Phase}]
		assert.True(t, ok, "no what-if row for %s", r.Phase)
	}
}

// TestAutoRangesMatchHandRanges (issue 39): the same model.generate()
// program recorded on an H200 twice, once with no NVTX range (annotated by
// deepprof's sitecustomize, workload.auto_ranges) and once annotated by
// hand: both find prefill and decode, with the same instances and
// launches, and kernel time per phase within 5 %. Where the program's GPU
// sets its pace (the -gpu pair: batch 2048), TTFT and TPOT agree within
// 5 % too; the launch-bound pair's wall times follow each process's host
// speed, which differed by a quarter between them.
func TestAutoRangesMatchHandRanges(t *testing.T) {
	t.Parallel()
	read := func(run string) facts.Summary {
		var s facts.Summary
		require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(rebuiltCopy(t, run), rundir.SummaryJSON)), &s))
		return s
	}
	phases := func(s facts.Summary) map[string]facts.PhaseRow {
		out := map[string]facts.PhaseRow{}
		for _, r := range s.Phases.Rows {
			out[r.Phase] = r
		}
		return out
	}
	for _, pair := range []struct {
		auto, hand string
		wall       bool // TTFT and TPOT held to 5 %
	}{
		{"h200-generate-auto-ranges", "h200-generate-by-hand", false},
		{"h200-generate-gpu-auto", "h200-generate-gpu-by-hand", true},
	} {
		t.Run(pair.auto, func(t *testing.T) {
			auto, hand := read("fixtures/runs/"+pair.auto), read("fixtures/runs/"+pair.hand)
			a, h := phases(auto), phases(hand)
			for _, p := range []string{"prefill", "decode_all", "decode_all/decode_step"} {
				require.Contains(t, a, p, "the automatic ranges found %s", p)
				require.Contains(t, h, p)
				assert.Equal(t, h[p].Instances, a[p].Instances, p)
				assert.Equal(t, h[p].Kernels, a[p].Kernels, "%s: launches", p)
				assert.InEpsilon(t, h[p].KernelMS, a[p].KernelMS, 0.05, "%s: kernel time", p)
			}
			for _, s := range []facts.Summary{auto, hand} {
				require.NotNil(t, s.Serving.TTFTMS, "TTFT from the prefill")
				require.NotNil(t, s.Serving.TPOTMS, "TPOT from the decode")
			}
			if pair.wall {
				assert.InEpsilon(t, *hand.Serving.TTFTMS, *auto.Serving.TTFTMS, 0.05, "TTFT")
				assert.InEpsilon(t, *hand.Serving.TPOTMS, *auto.Serving.TPOTMS, 0.05, "TPOT")
			}
			assert.NotEmpty(t, auto.WhatIf.Rows, "the ladder follows from the phases")
		})
	}
}

// TestProgramModelFacts (issue 39): the automatic ranges wrote the model's
// facts from its transformers config (timeline/model.json, recorded on an
// H200 with no model.* override): the rebuild takes them, so MBU and MFU
// follow, and the Environment says where they came from. The tokens are
// the program's: 2048 sequences of a 128-token prompt, 31 decode passes.
// A facts file that does not parse fails the rebuild, naming its line,
// and the other outputs are still made. (An override winning over the
// file: TestProgramFactsUnderTheProfile, package summary.)
func TestProgramModelFacts(t *testing.T) {
	t.Parallel()
	const src = "fixtures/runs/h200-generate-gpu-auto"
	var s facts.Summary
	rebuilt := rebuiltCopy(t, src)
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(rebuilt, rundir.SummaryJSON)), &s))
	assert.Contains(t, s.Environment.ModelFrom, "the transformers config of LlamaForCausalLM ("+rundir.TimelineModel+")")
	require.NotNil(t, s.Environment.Model)
	assert.Equal(t, "LlamaForCausalLM", s.Environment.Model.Arch)
	assert.Positive(t, s.Environment.Model.MatmulParams)
	assert.Equal(t, int64(2048), s.Stages.Batch, "the batch of the program's generate()")
	require.NotNil(t, s.Serving.MBU, s.Serving.Missing)
	assert.Positive(t, *s.Serving.MBU)
	assert.NotNil(t, s.MFU.Model, s.MFU.Missing)
	mf, err := workload.ReadModelFacts(bytes.NewReader(mustRead(t, filepath.Join(src, rundir.TimelineModel))), rundir.TimelineModel)
	require.NoError(t, err)
	assert.Equal(t, int64(2048*31), mf.Tokens.Generated, "a token a sequence for each decode pass")
	assert.Equal(t, int64(2048*128), mf.Tokens.Prompt)
	assert.Contains(t, string(mustRead(t, filepath.Join(rebuilt, rundir.StakeholderSummary))), "generates 63488",
		"the summary's tokens are the file's")

	bad := synth.RawRun(t, src, synth.WriteFile(rundir.TimelineModel, "{\"format\": \"deepprof-model-facts/1\",\n \"batch\": \"many\"}\n"))
	_, err = harness.Report(bad, harness.ReportOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), rundir.TimelineModel+":2:")
	assert.FileExists(t, filepath.Join(bad, rundir.SummaryJSON))
}

// TestCuptiRunStandsInForStage1 (issues 34 and 36): every recorded run
// whose program wrote a workload report in both its plain run and its
// CUPTI run, rebuilt without the plain run's, takes its stages from the
// CUPTI run's report, and tells one story with them: a phase's wall time
// per steady instance is its stage's mean (checkStory), the phases and
// the stages being one run's.
func TestCuptiRunStandsInForStage1(t *testing.T) {
	runs, err := filepath.Glob("fixtures/runs/*/" + rundir.TimelineReport)
	require.NoError(t, err)
	n := 0
	for _, rep := range runs {
		src := filepath.Dir(filepath.Dir(rep))
		if _, err := os.Stat(filepath.Join(src, rundir.Stage1Report)); err != nil {
			continue
		}
		n++
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), filepath.Base(src))
			require.NoError(t, synth.RawCopy(dst, src))
			require.NoError(t, os.Remove(filepath.Join(dst, rundir.Stage1Report)))
			_, err := harness.Report(dst, harness.ReportOptions{})
			require.NoError(t, err)
			var s facts.Summary
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dst, rundir.SummaryJSON)), &s))
			assert.Contains(t, s.Stages.Source, rundir.SourceCuptiReport)
			assert.False(t, s.Stages.FromRanges)
			require.NotEmpty(t, s.Stages.Rows)
			for _, g := range s.Gaps() {
				assert.NotContains(t, g, "Top Operators", "an operator table left out by choice is no gap")
			}
			checkStory(t, &s)
		})
	}
	assert.GreaterOrEqual(t, n, 5, "recorded runs with both reports")
}

// TestInferredPhasesTellTheStory (issue 39): a recorded model.generate()
// program, its ranges left out of the record file (SYNTHETIC: the program
// had it opened none), rebuilt: its phases are inferred from the kernel
// stream, said so, and the figures follow from them as from the ranges:
// TPOT within 5 % of the run with its ranges (automatic ones, around each
// forward pass), the one story (checkStory) and a what-if row for each
// phase. Its TTFT is within 25 %: an inferred prefill, as each inferred
// step, holds its token's sampling, which those ranges leave out.
func TestInferredPhasesTellTheStory(t *testing.T) {
	t.Parallel()
	const src = "fixtures/runs/h200-generate-auto-ranges"
	dir := synth.RawRun(t, src, synth.StripNVTX())
	_, err := harness.Report(dir, harness.ReportOptions{})
	require.NoError(t, err)
	var got, want facts.Summary
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, rundir.SummaryJSON)), &got))
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.SummaryJSON)), &want))
	assert.Contains(t, got.Stages.Source, rundir.SourceInferredStages)
	assert.True(t, got.Stages.FromRanges)
	checkStory(t, &got)
	require.NotNil(t, got.Serving.TTFTMS, got.Serving.Missing)
	require.NotNil(t, got.Serving.TPOTMS, got.Serving.Missing)
	assert.InEpsilon(t, *want.Serving.TTFTMS, *got.Serving.TTFTMS, 0.25, "TTFT")
	assert.InEpsilon(t, *want.Serving.TPOTMS, *got.Serving.TPOTMS, 0.05, "TPOT")
	phases := map[string]bool{}
	for _, w := range got.WhatIf.Rows {
		phases[w.Phase] = true
	}
	assert.True(t, phases["prefill"] && phases["decode_all"], "what-if rows: %v", phases)
	report := string(mustRead(t, filepath.Join(dir, rundir.ReportMD)))
	assert.Contains(t, report, "phases inferred from the kernel stream")
}

// TestInferredCppDecodeLoop (issue 39): a CUDA C++ decoder loop of our own
// (scripts/corpus/decode_loop.cu: 3 generates of a prefill and 16 decode
// steps, no NVTX range, no framework), recorded on an H200: the rebuild
// finds as many prefills and decode steps as the program ran, says they
// were inferred, and tells one story with them.
func TestInferredCppDecodeLoop(t *testing.T) {
	t.Parallel()
	dir := rebuiltCopy(t, "fixtures/runs/h200-cpp-decode-loop")
	var s facts.Summary
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, rundir.SummaryJSON)), &s))
	assert.Contains(t, s.Stages.Source, rundir.SourceInferredStages)
	n := map[string]int{}
	for _, r := range s.Stages.Rows {
		n[r.Name] = len(r.MS)
	}
	assert.Equal(t, 3, n["prefill"], "the program's prefills")
	assert.Equal(t, 3, n["decode_all"], "the program's generates")
	assert.Equal(t, 3*16, n["decode_step"], "the program's decode steps")
	checkStory(t, &s)
}

// TestAloneAfterDetach (issue 36): the default session recorded with the
// library detached before the program-alone repeats (an H100, no stage 1
// run) gives the program's speed from those repeats, says so beside the
// stages, in the serving figures, MFU and the operator table, and keeps
// the stages the CUPTI run's: the story stays one run's.
func TestAloneAfterDetach(t *testing.T) {
	t.Parallel()
	const src = "fixtures/runs/h100-default-alone-detached"
	assert.NoFileExists(t, filepath.Join(src, rundir.Stage1Report), "no plain run was made")
	// The record file ends with the detach, then the normal exit.
	recs, err := filepath.Glob(filepath.Join(src, "timeline/cupti/cupti-*.tsv.gz"))
	require.NoError(t, err)
	require.Len(t, recs, 1)
	tail := gunzip(t, mustRead(t, recs[0]), recs[0])
	lines := strings.Split(strings.TrimSpace(string(tail)), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	assert.True(t, strings.HasPrefix(lines[len(lines)-2], "X\trecording\tdetached "), "%q", lines[len(lines)-2])
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "E\t"), "%q", lines[len(lines)-1])

	f, err := os.Open(filepath.Join(src, rundir.TimelineReport))
	require.NoError(t, err)
	defer f.Close()
	rep, err := workload.ReadReport(f, rundir.TimelineReport)
	require.NoError(t, err)
	alone, ok := rep.Alone()
	require.True(t, ok, "the CUPTI run's report has its alone repeats")

	dir := rebuiltCopy(t, src)
	var s facts.Summary
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dir, rundir.SummaryJSON)), &s))
	assert.Equal(t, rundir.SourceAloneDetached, s.Stages.AloneSource)
	assert.Contains(t, s.Stages.Source, rundir.SourceCuptiReport, "the stages are the CUPTI run's")
	for _, r := range s.Stages.Rows {
		require.NotNil(t, r.Recorded, r.Name)
		assert.Equal(t, alone.Stages[r.Name].MS, r.MS, "%s: the row is the program alone's repeats, as diff and baselines take", r.Name)
		assert.Equal(t, rep.Stages[r.Name].MS, r.Recorded.MS, "%s: beside it, the recorded repeats", r.Name)
		assert.Less(t, r.MeanMS, r.Recorded.MeanMS, "%s: recorded, the program ran slower than alone", r.Name)
	}
	assert.Equal(t, "the CUPTI run, library detached", s.Serving.From)
	require.NotNil(t, s.Serving.TTFTMS)
	assert.Contains(t, s.MFU.Assumptions[len(s.MFU.Assumptions)-1], "after the library detached")
	assert.True(t, s.Operators.Detached)
	assert.NotEmpty(t, s.Operators.Rows, "the operator table made after the detach")
	md := string(mustRead(t, filepath.Join(dir, rundir.StakeholderSummary)))
	assert.Contains(t, md, "CUPTI run ms (library recording)")
	assert.Contains(t, md, "From torch.profiler in the CUPTI run, after the library detached CUPTI from the process")
	assert.Contains(t, string(mustRead(t, filepath.Join(dir, rundir.OperatorsMD))), "(the CUPTI run, after the library detached CUPTI from the process,")
	checkStory(t, &s)
}

// TestAloneStage1Wins (issue 36): the detached run with a stage 1 beside
// it (workload.plain_run=always; here SYNTHETIC: the CUPTI run's report,
// its operators renamed and its alone repeats dropped, written as stage
// 1's) takes stage 1's figures and operator table and says stage 1; a
// stage 1 report that cannot be read gives no alone figures at all, never
// the detached ones in its place.
func TestAloneStage1Wins(t *testing.T) {
	t.Parallel()
	const src = "fixtures/runs/h100-default-alone-detached"
	var rep map[string]any
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.TimelineReport)), &rep))
	delete(rep, "alone")
	delete(rep, "overhead")
	rep["phase"] = "stage1"
	for _, op := range rep["operators"].([]any) {
		op.(map[string]any)["name"] = "stage1::" + op.(map[string]any)["name"].(string)
	}
	stage1, err := json.Marshal(rep)
	require.NoError(t, err)

	var rerr error
	rebuild := func(report []byte) facts.Summary {
		dst := filepath.Join(t.TempDir(), "run")
		require.NoError(t, synth.RawCopy(dst, src))
		require.NoError(t, os.MkdirAll(filepath.Join(dst, "stage1"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dst, rundir.Stage1Report), report, 0o644))
		_, rerr = harness.Report(dst, harness.ReportOptions{})
		var s facts.Summary
		require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dst, rundir.SummaryJSON)), &s))
		return s
	}
	s := rebuild(stage1)
	require.NoError(t, rerr)
	assert.Empty(t, s.Stages.AloneSource, "stage 1's")
	assert.False(t, s.Operators.Detached)
	require.NotEmpty(t, s.Operators.Rows)
	for _, r := range s.Operators.Rows {
		assert.True(t, strings.HasPrefix(r.Name, "stage1::"), "%s: stage 1's table", r.Name)
	}
	require.NotNil(t, s.Stages.Rows[0].Recorded)
	assert.Equal(t, "stage 1", s.Serving.From)

	s = rebuild([]byte("{not json"))
	assert.Empty(t, s.Stages.AloneSource)
	assert.Contains(t, s.Stages.AloneMissing, rundir.Stage1Report, "said, not the detached repeats in its place")
	require.ErrorContains(t, rerr, rundir.Stage1Report, "and the rebuild's exit says it")
	for _, r := range s.Stages.Rows {
		assert.Nil(t, r.Recorded, "%s: no alone figures from an unreadable stage 1: the row stays the recorded repeats'", r.Name)
	}
}

// TestPlainRunAlwaysNoAlone (issue 36): the default session with
// workload.plain_run=always, recorded on an H200: the CUPTI run was told
// (DEEPPROF_ALONE=0) to time no alone repeats and make no operator table,
// its records hold no detach, and stage 1 gives the alone figures and the
// operator table.
func TestPlainRunAlwaysNoAlone(t *testing.T) {
	t.Parallel()
	const src = "fixtures/runs/h200-default-plain-run-always"
	var cupti, stage1 map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.TimelineReport)), &cupti))
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.Stage1Report)), &stage1))
	assert.NotContains(t, cupti, "alone")
	assert.NotContains(t, cupti, "operators")
	assert.Contains(t, stage1, "operators")
	recs, err := filepath.Glob(filepath.Join(src, "timeline/cupti/cupti-*.tsv.gz"))
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.NotContains(t, string(gunzip(t, mustRead(t, recs[0]), recs[0])), "\tdetached ")

	var s facts.Summary
	require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(rebuiltCopy(t, src), rundir.SummaryJSON)), &s))
	assert.Empty(t, s.Stages.AloneSource, "stage 1's")
	assert.Equal(t, "stage 1", s.Serving.From)
	assert.False(t, s.Operators.Detached)
	assert.NotEmpty(t, s.Operators.Rows)
	for _, r := range s.Stages.Rows {
		assert.NotNil(t, r.Recorded, r.Name)
	}
}
