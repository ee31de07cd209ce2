//go:build gpu

package deepprof_test

// Real Stage 2 sessions on an NVIDIA GPU: go test -tags gpu -run Stage2 ./...
// Overrides reach them from DEEPPROF_OVERRIDES and after -args (see
// profiles/README.md); DEEPPROF_GPU_OUT keeps the run directories (default: a
// temporary folder). Choose architectures with -run, e.g.
// -run 'Stage2Sessions/tiny-llama'.

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/deepproftest"
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// preflight returns ncu's path, or skips naming what is missing.
func preflight(t *testing.T) (harness.Tool, harness.GPU) {
	t.Helper()
	m := deepproftest.Preflight(t)
	// The default workload also needs transformers.
	if out, err := exec.Command("python3", "-c", "import transformers").CombinedOutput(); err != nil {
		t.Skipf("the workload's Python cannot import transformers: %v\n%s", err, out)
	}
	return m.Ncu, m.GPU
}

func TestStage2Preflight(t *testing.T) {
	tool, prov := preflight(t)
	t.Logf("GPU %s (driver %s, CUDA %s); %s %s", prov.Name, prov.Driver, prov.CUDA, tool.Path, tool.Version)
}

// runSession runs one whole session as `deepprof profile` does.
func runSession(t *testing.T, tool harness.Tool, root, id string, overrides ...string) *rundir.Run {
	t.Helper()
	r := deepproftest.Profile(t, deepproftest.Machine{Ncu: tool}, deepproftest.Options{
		ProfilesDir: "profiles", Root: root, ID: id, Overrides: append(overrides, config.GoTestOverrides()...)})
	run, err := rundir.Open(r.Dir)
	require.NoError(t, err)
	return run
}

func outDir(t *testing.T) string {
	if d := os.Getenv("DEEPPROF_GPU_OUT"); d != "" {
		return d
	}
	return t.TempDir()
}

// TestStage2Sessions runs a whole session per architecture profile and
// checks what a person would check.
func TestStage2Sessions(t *testing.T) {
	tool, prov := preflight(t)
	root := outDir(t)
	for _, w := range []struct {
		name      string
		domain    string // the NVTX domain the workload pushes its ranges in
		subStage  string // a sub-stage range the workload pushes, "" for none
		overrides []string
	}{
		{name: "tiny-llama", overrides: []string{"workloads=tiny-llama"}},
		{name: "qwen2-0.5b", overrides: []string{"workloads=qwen2-0.5b"}},
		{name: "llama3-8b", overrides: []string{"workloads=llama3-8b", "ncu=roofline"}},
		// GPT-2 pushes its ranges in a named domain (the nvtx3 shim) and
		// times its first attention block as a sub-stage.
		{name: "gpt2", domain: "LLM", subStage: "attn0", overrides: []string{"workloads=gpt2", "nvtx.domain=LLM",
			"workload.argv=[scripts/workloads/hf_causal_lm.py, --prompt-tokens=256, --new-tokens=32, --warmup=1, --operators, --sub-stage=transformer.h.0.attn=attn0]"}},
	} {
		t.Run(w.name, func(t *testing.T) {
			id := w.name + "-" + time.Now().UTC().Format("150405")
			run := runSession(t, tool, root, id, w.overrides...)
			checkRun(t, run, prov, w.domain)
			checkBaseline(t, run, prov, w.name)
			if w.subStage != "" {
				checkSubStage(t, run, w.domain, w.subStage)
			}
			if w.name == "tiny-llama" {
				again := runSession(t, tool, root, id+"-again", w.overrides...)
				a, b := timedTotal(t, run), timedTotal(t, again)
				assert.InEpsilon(t, a, b, 0.10, "a re-run's timed GPU total is within 10%% (%.4f ms, %.4f ms)", a, b)
			}
		})
	}
}

// timedTotal is the run's timed GPU total: every launch in its NVTX
// ranges, from the timeline that timed it (ncu/regions/report.json).
func timedTotal(t *testing.T, run *rundir.Run) float64 {
	var rep struct {
		ProfiledMS float64 `json:"profiled_ms"`
	}
	readJSON(t, run.Path(rundir.RegionsJSON), &rep)
	require.Greater(t, rep.ProfiledMS, 0.0)
	return rep.ProfiledMS
}

func checkRun(t *testing.T, run *rundir.Run, prov harness.GPU, domain string) {
	t.Helper()
	decodeName := "decode_all"
	if domain != "" {
		decodeName = domain + "@decode_all"
	}
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, "%s", m.Reason)
	for _, rel := range []string{rundir.StakeholderSummary, rundir.SummaryJSON, rundir.OperatorsMD, rundir.ChartTopKernels,
		rundir.EnvJSON, rundir.ConfigYAML, rundir.InputsYAML, rundir.KernelsMD,
		rundir.KernelsJSON, rundir.ReportMD, rundir.ManifestJSON, rundir.NcuRaw, rundir.RegionsMD, rundir.RegionsJSON} {
		assert.FileExists(t, run.Path(rel))
	}

	// The top kernels carry time.
	var ks struct {
		Kernels []model.KernelStats `json:"kernels"`
	}
	readJSON(t, run.Path(rundir.KernelsJSON), &ks)
	require.NotEmpty(t, ks.Kernels)
	for _, k := range ks.Kernels[:min(5, len(ks.Kernels))] {
		assert.Greater(t, k.TotalMS, 0.0, k.Name)
	}

	// The decode region exists and holds the deep pass's decode launches;
	// top-level regions and launches outside them reconcile with the total.
	var rep struct {
		Aggregate []struct {
			Name        string  `json:"name"`
			Depth       int     `json:"depth"`
			TotalMS     float64 `json:"total_ms"`
			KernelCount int64   `json:"kernel_count"`
		} `json:"aggregate"`
		ProfiledMS float64 `json:"profiled_ms"`
		OutsideMS  float64 `json:"outside_ms"`
	}
	// The deep pass's sample by region (ncu/regions/ is the run's totals,
	// from the timing pass).
	readJSON(t, run.Path(rundir.RegionsSampleJSON), &rep)
	decode, top := int64(-1), rep.OutsideMS
	for _, r := range rep.Aggregate {
		if r.Name == decodeName {
			decode = r.KernelCount
		}
		if r.Depth == 1 {
			top += r.TotalMS
		}
	}
	assert.Greater(t, decode, int64(0), "a %s region with launches", decodeName)
	assert.InEpsilon(t, rep.ProfiledMS, top, 1e-9, "regions and launches outside them add up to the profiled time")
	deepDecode := 0
	f, err := os.Open(run.Path(rundir.NcuRaw))
	require.NoError(t, err)
	defer f.Close()
	r := ncu.NewReader(f, rundir.NcuRaw, ncu.Options{})
	for r.Scan() {
		if l, ok := r.Record().(*model.Launch); ok && strings.HasPrefix(l.NVTX.Path(), decodeName) {
			deepDecode++
		}
	}
	assert.EqualValues(t, deepDecode, decode, "the decode region holds every decode launch of the deep pass")

	// The stakeholder summary has every section's data: the GPU is in the
	// peak table, the workload reports its FLOP facts and operators.
	var sum facts.Summary
	readJSON(t, run.Path(rundir.SummaryJSON), &sum)
	assert.Empty(t, sum.Gaps(), "sections without data")
	if assert.NotNil(t, sum.MFU.Model, sum.MFU.Missing) {
		assert.Greater(t, *sum.MFU.Model, 0.0)
		assert.Less(t, *sum.MFU.Model, 1.0)
	}
	if sum.Operators.NotMade { // the CUPTI run stood in for stage 1, which makes it
		assert.Contains(t, sum.Operators.Missing, "workload.plain_run=always")
	} else {
		assert.NotEmpty(t, sum.Operators.Rows)
	}
	assert.NotEmpty(t, sum.Kernels.Rows)
	assert.NotEmpty(t, sum.Narrative.Recommendations)

	// env.json names the GPU NVML reports.
	var env workload.EnvInfo
	readJSON(t, run.Path(rundir.EnvJSON), &env)
	require.NotNil(t, env.GPU, env.GPUError)
	assert.Equal(t, prov.Name, env.GPU.Selected.Name)
	assert.Equal(t, prov.UUID, env.GPU.Selected.UUID)
}

// checkBaseline compares the run with its GPU's performance baseline,
// golden/perf/<NVML name>-<workload>.json, within the profile's baseline
// tolerances; -update (re)writes it. A GPU with no baseline yet is logged,
// not failed: baselines are per machine.
func checkBaseline(t *testing.T, run *rundir.Run, prov harness.GPU, name string) {
	t.Helper()
	cfg, err := config.Parse(run.Path(rundir.ConfigYAML))
	require.NoError(t, err)
	base := strings.ReplaceAll(prov.Name, " ", "-") + "-" + name
	if _, err := os.Stat(filepath.Join(deepproftest.BaselineDir, base+".json")); err != nil && !updating() {
		t.Logf("no baseline %s/%s.json for this GPU: record one with -update", deepproftest.BaselineDir, base)
		return
	}
	deepproftest.CheckBaseline(t, base, run.Dir, harness.Tolerances(cfg.Baseline))
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// checkSubStage checks a sub-stage both ways: the workload timed it inside
// prefill and decode, and ncu saw its range nested in the stages' ranges.
func checkSubStage(t *testing.T, run *rundir.Run, domain, rng string) {
	t.Helper()
	// stage 1's report, or the CUPTI run's standing in for it
	rel := rundir.Stage1Report
	if !run.Exists(rel) {
		rel = rundir.TimelineReport
	}
	f, err := os.Open(run.Path(rel))
	require.NoError(t, err)
	defer f.Close()
	rep, err := workload.ReadReport(f, rel)
	require.NoError(t, err)
	for _, parent := range []string{"prefill", "decode"} {
		st, ok := rep.Stages[parent+"/"+rng]
		if assert.True(t, ok, "stage %s/%s in the workload report", parent, rng) {
			assert.Equal(t, parent, st.Parent)
			assert.Len(t, st.MS, len(rep.Stages[parent].MS), "one time per repeat")
			for i, ms := range st.MS {
				assert.Less(t, ms, rep.Stages[parent].MS[i], "a sub-stage takes less than its parent")
			}
		}
	}
	var regs struct {
		Aggregate []struct {
			Name string `json:"name"`
		} `json:"aggregate"`
	}
	readJSON(t, run.Path(rundir.RegionsJSON), &regs)
	found := false
	for _, r := range regs.Aggregate {
		found = found || strings.HasSuffix(r.Name, "/"+domain+"@"+rng)
	}
	assert.True(t, found, "a region %s@%s nested in a stage: %v", domain, rng, regs.Aggregate)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}
