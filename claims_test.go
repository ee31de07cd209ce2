package deepprof_test

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// recordedSummaries are the summary.json files of the recorded runs, by
// run name.
func recordedSummaries(t *testing.T) map[string]facts.Summary {
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	out := map[string]facts.Summary{}
	for _, src := range runs {
		var s facts.Summary
		require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.SummaryJSON)), &s), src)
		out[filepath.Base(src)] = s
	}
	return out
}

// upTo finds the estimates a text gives a top kernel: "#N (up to P% of its
// time)", and the top kernel's "ncu estimates up to P%".
var (
	upTo      = regexp.MustCompile(`#(\d+) \(up to ([0-9.]+)% of its time\)`)
	topUpTo   = regexp.MustCompile(`^The top kernel, #1 .*ncu estimates up to ([0-9.]+)%`)
	atMostPct = regexp.MustCompile(`at ([0-9.]+)% of peak at most ([0-9.]+)%`)
)

// TestRecordedRunsClaimsHold: on every recorded run, each claim the
// summary makes holds its check (DESIGN: "A claim carries its check").
func TestRecordedRunsClaimsHold(t *testing.T) {
	for name, s := range recordedSummaries(t) {
		t.Run(name, func(t *testing.T) {
			solCapped(t, s)
			boundsMeasured(t, s)
			ladderStops(t, s)
			launchBoundByGaps(t, s)
			fp32Lever(t, s)
		})
	}
}

// solCapped: no estimate of ncu's is said past what the kernel's speed of
// light leaves (100 − SOL), and the sums of the rules use the cap.
func solCapped(t *testing.T, s facts.Summary) {
	rows := s.Kernels.Rows
	within := func(rank int, pct float64, where string) {
		if rank < 1 || rank > len(rows) {
			return
		}
		if sol, ok := solOf(rows[rank-1]); ok {
			assert.LessOrEqual(t, pct, 100-sol+0.05, "#%d at SOL %.1f%%: %s", rank, sol, where)
		}
	}
	for _, r := range s.Narrative.Recommendations {
		for _, m := range upTo.FindAllStringSubmatch(r.Text, -1) {
			rank, _ := strconv.Atoi(m[1])
			pct, _ := strconv.ParseFloat(m[2], 64)
			within(rank, pct, r.Text)
		}
		for _, m := range atMostPct.FindAllStringSubmatch(r.Text, -1) {
			sol, _ := strconv.ParseFloat(m[1], 64)
			pct, _ := strconv.ParseFloat(m[2], 64)
			assert.InDelta(t, 100-sol, pct, 0.11, r.Text)
		}
		if r.Kind == "ncu" && r.EstSavingPct != nil {
			capped := 0.0
			for _, rank := range r.Kernels {
				k := rows[rank-1]
				for _, rule := range k.Rules {
					if rule.SpeedupPct != nil && rule.Name == ruleName(k, r) {
						est := *rule.SpeedupPct
						if sol, ok := solOf(k); ok {
							est = min(est, 100-sol)
						}
						capped += k.Share * est
					}
				}
			}
			assert.InDelta(t, capped, *r.EstSavingPct, 1e-6, "the rule's sum is of the capped estimates: %s", r.Text)
		}
	}
	for _, l := range s.Narrative.Lines {
		if m := topUpTo.FindStringSubmatch(l); m != nil {
			pct, _ := strconv.ParseFloat(m[1], 64)
			within(1, pct, l)
		}
	}
}

// ruleName is the name of the ncu rule a recommendation is about: the one
// of the kernel's rules its text names after "ncu's ".
func ruleName(k facts.KernelRow, r facts.Recommendation) string {
	for _, rule := range k.Rules {
		if regexp.MustCompile(`^ncu's ` + regexp.QuoteMeta(rule.Name) + ` `).MatchString(r.Text) {
			return rule.Name
		}
	}
	return ""
}

// solOf is a kernel's speed of light, the higher of its SM and memory
// throughputs; ok is false without them.
func solOf(k facts.KernelRow) (float64, bool) {
	if k.SMPct == nil || k.MemPct == nil {
		return 0, false
	}
	return max(*k.SMPct, *k.MemPct), true
}

// boundsMeasured: no advice and no claim rests on the bound of a kernel
// whose measured configurations ran less than half of its time.
func boundsMeasured(t *testing.T, s facts.Summary) {
	partly := map[string]bool{}
	for i, k := range s.Kernels.Rows {
		if k.Sampled == nil || k.Sampled.Share >= 0.5 {
			continue
		}
		partly[k.Shown()] = true
		for _, r := range s.Narrative.Recommendations {
			if r.Kind == "kernels" {
				assert.NotContains(t, r.Kernels, i+1, "advice from the bound of #%d, measured on %.1f%% of its time: %s", i+1, 100*k.Sampled.Share, r.Text)
			}
		}
	}
	for _, c := range s.Narrative.Claims {
		assert.False(t, partly[c.Subject] && c.Kind != "warm-up", "claim on a partly measured kernel: %+v", c)
	}
}

// ladderStops: no rung of the what-if ladder lies below the binding
// physical floor (the higher of the bandwidth and compute floors).
func ladderStops(t *testing.T, s facts.Summary) {
	for _, w := range s.WhatIf.Rows {
		floor := 0.0
		for _, f := range []*float64{w.BandwidthFloorMS, w.ComputeFloorMS} {
			if f != nil {
				floor = max(floor, *f)
			}
		}
		for _, r := range w.Rungs {
			if r.Floor != facts.FloorBusy {
				assert.GreaterOrEqual(t, r.MS, floor, "%s: the %s rung is below the binding floor %.3f ms", w.Phase, r.Floor, floor)
			}
		}
	}
}

// fp32Lever: a GEMM that computes in FP32 off the tensor cores is never
// told that only less arithmetic helps: TF32 or BF16 tensor cores come
// first.
func fp32Lever(t *testing.T, s facts.Summary) {
	for _, r := range s.Narrative.Recommendations {
		for _, rank := range r.Kernels {
			if r.Kind == "kernels" && rank <= len(s.Kernels.Rows) && s.Kernels.Rows[rank-1].FP32GEMM {
				assert.NotContains(t, r.Text, "only less arithmetic helps", "#%d is an FP32 GEMM", rank)
			}
		}
	}
}

// launchBoundByGaps: a phase is launch-bound only with kernels, and with
// the gaps between them making at least half of its idle time.
func launchBoundByGaps(t *testing.T, s facts.Summary) {
	for _, r := range s.Phases.Rows {
		if !r.LaunchBound {
			continue
		}
		assert.Positive(t, r.Kernels, "%s: launch-bound with no kernel", r.Label())
		assert.GreaterOrEqual(t, 2*r.GapMS, r.IdleMS-1e-6, "%s: launch-bound with gaps of %.3f ms in %.3f ms idle", r.Label(), r.GapMS, r.IdleMS)
	}
}

// TestRecordedRunsLeversByKind: each recorded run's advice names the
// levers of its kind of program (DESIGN: "levers by program kind"): no
// torch.compile to a program that is not PyTorch, no Python blamed for a
// C/C++ one; XLA's command buffers for JAX; the CUDA graphs torch.compile
// did not capture where no graph launch is recorded; stream capture for
// C/C++.
func TestRecordedRunsLeversByKind(t *testing.T) {
	summaries := recordedSummaries(t)
	kinds := map[string]facts.ProgramKind{
		"corpus-cpp": facts.ProgramNative, "h200-cpp-decode-loop": facts.ProgramNative, "any-cuda-cpp": facts.ProgramNative,
		"corpus-jax": facts.ProgramJAX, "corpus-hf-auto": facts.ProgramPyTorch,
		"corpus-compile": facts.ProgramTorchCompile, "h200-compiled-decoder": facts.ProgramTorchCompile,
	}
	for name, kind := range kinds {
		assert.Equal(t, kind, summaries[name].Environment.Program.Kind, name)
	}
	for name, s := range summaries {
		t.Run(name, func(t *testing.T) {
			text := adviceText(s) + string(mustRead(t, filepath.Join("fixtures/runs", name, rundir.StakeholderSummary)))
			p := s.Environment.Program
			if p.Kind != facts.ProgramPyTorch && p.Kind != facts.ProgramTorchCompile {
				saysNot(t, text, "torch.compile", p.Kind)
			}
			if p.Kind == facts.ProgramNative {
				saysNot(t, text, "Python", p.Kind)
			}
			launchBound := len(s.Narrative.LaunchBound) > 0
			if !launchBound {
				return
			}
			switch p.Kind {
			case facts.ProgramJAX:
				assert.Contains(t, text, "XLA's command buffers")
			case facts.ProgramPyTorch:
				if p.GraphLaunches == 0 {
					assert.Contains(t, text, "CUDA graphs or torch.compile")
				} else {
					assert.Contains(t, text, fmt.Sprintf("More of each step in CUDA graphs (the run launched %d", p.GraphLaunches))
				}
			case facts.ProgramTorchCompile:
				if p.GraphLaunches == 0 {
					assert.Contains(t, text, "which torch.compile did not capture")
					assert.Contains(t, text, `TORCH_LOGS="graph_breaks,recompiles"`)
				}
			case facts.ProgramNative:
				assert.Contains(t, text, "cudaStreamBeginCapture")
			}
		})
	}
	for _, name := range []string{"corpus-jax", "corpus-hf-auto", "corpus-compile", "h200-compiled-decoder", "any-cuda-cpp"} {
		assert.NotEmpty(t, summaries[name].Narrative.LaunchBound, "%s: its levers are checked above", name)
	}
}

// saysNot fails the test with each line of text that holds s.
func saysNot(t *testing.T, text, s string, kind facts.ProgramKind) {
	t.Helper()
	for l := range strings.Lines(text) {
		if strings.Contains(l, s) {
			t.Errorf("a program of kind %q is told %q: %s", kind, s, l)
		}
	}
}

// adviceText is what a summary says: its findings, its recommendations and
// the levers of its ladder, one a line.
func adviceText(s facts.Summary) string {
	var b strings.Builder
	for _, l := range s.Narrative.Lines {
		b.WriteString(l + "\n")
	}
	for _, r := range s.Narrative.Recommendations {
		b.WriteString(r.Text + "\n")
	}
	for _, w := range s.WhatIf.Rows {
		for _, r := range w.Rungs {
			b.WriteString(r.Lever + "\n")
		}
	}
	return b.String()
}

// kernelTotal finds the kernel-time totals the findings and the advice
// give: "of 68.78 ms of GPU kernel time", "of the 68.777 ms of kernel
// time", each with the rest of its sentence.
var kernelTotal = regexp.MustCompile(`of (?:the )?([0-9.]+) ms of (?:GPU )?kernel time ([^;.]*(?:\.[0-9][^;.]*)*)`)

// TestRecordedRunsFindingsSteady: on every recorded run, each kernel-time
// total of Findings, of the advice and of Top Kernels is the steady
// phases' (the kernel time of the phases its ranges name, their warm-up
// left out), or says what it holds of the warm-up and how much (DESIGN:
// "Steady state": every figure built from instances uses the one warm-up
// decision).
func TestRecordedRunsFindingsSteady(t *testing.T) {
	warmups := 0
	for name, s := range recordedSummaries(t) {
		t.Run(name, func(t *testing.T) {
			k := s.Kernels
			if k.Missing != "" {
				return
			}
			steady, warm, phases := phaseKernelMS(s, k)
			switch {
			case k.Scope == facts.ScopeRanges && phases > 0:
				assert.InDelta(t, steady, k.TotalMS, 1e-6*steady+1e-9, "the ranges' kernel time is their steady phases'")
				if warm > 0 {
					warmups++
					require.NotNil(t, k.Warmup, "the warm-up's %.3f ms is said", warm)
					assert.True(t, k.Warmup.LeftOut)
					assert.InDelta(t, warm, k.Warmup.MS, 1e-6*warm+1e-9)
				} else {
					assert.Nil(t, k.Warmup)
				}
			case warm > 0:
				require.NotNil(t, k.Warmup, "a whole run's total says the warm-up it holds")
				assert.False(t, k.Warmup.LeftOut)
				assert.InDelta(t, warm, k.Warmup.MS, 1e-6*warm+1e-9)
			case phases == 0 && slices.ContainsFunc(s.Stages.Rows, func(r facts.Stage) bool { return r.WarmupMS != nil }):
				assert.True(t, k.WarmupIncluded, "a table with no warm-up decision says it holds the warm-up the stages drop")
			}
			says := warmupWords(k)
			var texts []string
			texts = append(texts, s.Narrative.Lines...)
			for _, r := range s.Narrative.Recommendations {
				texts = append(texts, r.Text)
			}
			for _, text := range texts {
				for _, m := range kernelTotal.FindAllStringSubmatch(text, -1) {
					v, err := strconv.ParseFloat(m[1], 64)
					require.NoError(t, err)
					assert.InDelta(t, k.TotalMS, v, 0.006, "a total of kernel time is the table's: %s", text)
					assert.Contains(t, m[2], says, "a total says what it holds of the warm-up: %s", text)
					saysWarmupMS(t, k, m[2])
				}
			}
			md := string(mustRead(t, filepath.Join("fixtures/runs", name, rundir.StakeholderSummary)))
			top := regexp.MustCompile(`(?m)^From .*: (\d+) launches, ([0-9.]+) ms of GPU time; share is of that time\.`).FindStringSubmatch(md)
			require.NotNil(t, top, "Top Kernels says its total")
			assert.Contains(t, top[0], says, "Top Kernels says what its total holds of the warm-up")
			saysWarmupMS(t, k, top[0])
			v, _ := strconv.ParseFloat(top[2], 64)
			assert.InDelta(t, k.TotalMS, v, 0.0006, "Top Kernels' total")
		})
	}
	assert.GreaterOrEqual(t, warmups, 10, "recorded runs with a warm-up in their profiled ranges")
}

// warmupMS finds the warm-up's (and measured instances') kernel time a
// total says it left out.
var warmupMS = regexp.MustCompile(`the (?:warm-up's|warm-up and measured instances'|measured instances') ([0-9.]+) ms left out`)

// saysWarmupMS: the warm-up time text says is left out is k's.
func saysWarmupMS(t *testing.T, k facts.Kernels, text string) {
	t.Helper()
	if m := warmupMS.FindStringSubmatch(text); m != nil {
		v, _ := strconv.ParseFloat(m[1], 64)
		require.NotNil(t, k.Warmup, text)
		assert.InDelta(t, k.Warmup.MS, v, 0.006, text)
	}
}

// warmupWords are the words a kernel-time total of k holds to say what it
// holds of the warm-up: "" where there is none to say.
func warmupWords(k facts.Kernels) string {
	switch {
	case k.Warmup != nil && k.Warmup.LeftOut && k.Warmup.MeasuredLaunches > 0:
		return "in steady state (the " + k.Warmup.Of() + " "
	case k.Warmup != nil && k.Warmup.LeftOut:
		return "in steady state (the warm-up's "
	case k.Warmup != nil && k.Warmup.MeasuredLaunches > 0:
		return "of it the "
	case k.Warmup != nil:
		return "of it the warm-up"
	case k.WarmupIncluded:
		return "warm-up included"
	}
	return ""
}

// phaseKernelMS sums the kernel time of the phases (not the ranges inside
// them) the kernel table's ranges name, every process and device: of their
// steady-state instances and of their warm-up apart; for a table of the
// whole run, of every phase. phases counts the rows summed.
func phaseKernelMS(s facts.Summary, k facts.Kernels) (steady, warm float64, phases int) {
	if s.Phases.Missing != "" {
		return 0, 0, 0
	}
	for _, r := range s.Phases.Rows {
		if r.Nested || r.Phase == "" || (k.Scope == facts.ScopeRanges && !slices.Contains(k.Ranges, r.Phase)) {
			continue
		}
		phases++
		steady += r.KernelMS
		if r.Warmup != nil {
			warm += r.Warmup.KernelMS
		}
		if r.Measured != nil {
			warm += r.Measured.KernelMS
		}
	}
	return steady, warm, phases
}

// hostPerCall finds the host time per launch call a ladder's advice gives.
var hostPerCall = regexp.MustCompile(`take ([0-9.]+) µs of host time each`)

// TestRecordedRunsHostPerLaunch: on every recorded run with a CUPTI
// timeline, the host time per launch the ladder and the launch-bound
// claims give is the launch calls' own (their CUPTI API records), not the
// phase's wall time over its launches: every phase with kernels has it,
// the ladder's rows carry their phase's, and the advice says it.
func TestRecordedRunsHostPerLaunch(t *testing.T) {
	rows := 0
	for name, s := range recordedSummaries(t) {
		t.Run(name, func(t *testing.T) {
			if s.Phases.Missing != "" {
				return
			}
			type key struct {
				pid   int64
				dev   model.DeviceID
				phase string
			}
			byPhase := map[key]facts.PhaseRow{}
			for _, r := range s.Phases.Rows {
				byPhase[key{r.ProcessID, r.Device, r.Phase}] = r
				if r.Kernels > 0 {
					require.NotNil(t, r.LaunchCallUS, "%s: its launch calls' host time", r.Label())
					assert.Positive(t, r.LaunchCalls)
					assert.LessOrEqual(t, r.LaunchCalls, r.Kernels, "%s: a call launches one kernel or a graph of several", r.Label())
					assert.InDelta(t, 1e3*r.LaunchCallMS/float64(r.LaunchCalls), *r.LaunchCallUS, 1e-9)
				}
			}
			for _, w := range s.WhatIf.Rows {
				r := byPhase[key{w.ProcessID, w.Device, w.Phase}]
				require.NotNil(t, w.LaunchCallUS, w.Phase)
				assert.Equal(t, *r.LaunchCallUS, *w.LaunchCallUS, w.Phase)
				assert.InDelta(t, r.LaunchCallMS/float64(r.Instances), *w.LaunchCallMSPerInstance, 1e-9, w.Phase)
				rows++
			}
			for _, c := range s.Narrative.Claims {
				if c.Kind == "launch-bound" && c.Subject != "the whole run" {
					assert.Contains(t, c.Figures, "launch_call_us", c.Subject)
				}
			}
			for _, r := range s.Narrative.Recommendations {
				assert.NotContains(t, r.Text, "µs of wall time each", "the wall time over the launches is not the host's time per launch")
				if m := hostPerCall.FindStringSubmatch(r.Text); m != nil {
					v, _ := strconv.ParseFloat(m[1], 64)
					found := false
					for _, w := range s.WhatIf.Rows {
						found = found || strings.HasPrefix(r.Text, w.Phase+" ") && math.Abs(*w.LaunchCallUS-v) <= 0.05
					}
					assert.True(t, found, "the advice's host time per launch call is its ladder row's: %s", r.Text)
				}
			}
		})
	}
	assert.Greater(t, rows, 30, "ladder rows on the recorded runs")
}

// TestRecordedRunsSayGraphKernelsUnmeasured (issue 52): where the library
// measured the deep metrics of a program that launched CUDA graphs, the
// Top Kernels section says that their kernels are not replayed and how to
// measure them; nowhere else.
func TestRecordedRunsSayGraphKernelsUnmeasured(t *testing.T) {
	const said = "are not replayed by the library: ncu.deep_source=ncu measures them"
	seen := 0
	for name, s := range recordedSummaries(t) {
		text := string(mustRead(t, filepath.Join("fixtures/runs", name, rundir.StakeholderSummary)))
		k := s.Kernels
		if k.DeepSource == facts.DeepByLibrary && k.DeepShare != nil && *k.DeepShare < 1 && s.Environment.Program.GraphLaunches > 0 {
			assert.Contains(t, text, said, name)
			seen++
			continue
		}
		assert.NotContains(t, text, said, name)
	}
	assert.GreaterOrEqual(t, seen, 2, "corpus-in-run-graphs and corpus-in-run-jax are such runs")
}
