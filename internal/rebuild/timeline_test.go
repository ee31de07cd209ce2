package rebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/render"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/phases"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

func TestInProcessOverheadIsTheMedianOfPairs(t *testing.T) {
	t.Parallel()
	o := newInProcess("m", []float64{12, 24, 30}, []float64{10, 20, 10})
	require.NotNil(t, o)
	assert.Equal(t, 24.0, o.OnMS)
	assert.Equal(t, 10.0, o.OffMS)
	assert.Equal(t, 3, o.Pairs)
	assert.InDelta(t, 1.2, o.Median, 1e-12, "pairs 1.2, 1.2, 3: median 1.2")

	assert.Nil(t, newInProcess("m", nil, []float64{1}), "no repeats on")
	assert.Nil(t, newInProcess("m", []float64{1, 2}, []float64{1}), "not pairs")
	assert.Nil(t, newInProcess("m", []float64{1}, []float64{0}), "a zero time")
}

func TestOverheadTextSaysWhichMeasureItIs(t *testing.T) {
	t.Parallel()
	section := func(o render.CuptiOverhead) string {
		return render.CuptiSection(&render.CuptiFacts{Overhead: &o})
	}
	across := render.CuptiOverhead{PlainMS: 100, CuptiMS: 150, Repeats: 3}
	txt := section(across)
	assert.Contains(t, txt, "1.500x")
	assert.Contains(t, txt, "did not measure it in one process")
	assert.NotContains(t, txt, "**")

	both := across
	both.InProcess = newInProcess("alternating", []float64{102}, []float64{100})
	both.Reference = newInProcess("alternating", []float64{130}, []float64{100})
	txt = section(both)
	assert.Contains(t, txt, "Overhead: **1.020x**")
	assert.Contains(t, txt, "in the recorded process, the median over 1 pairs")
	assert.Contains(t, txt, "Across processes")
	assert.Contains(t, txt, "1.500x", "the cross-process figure is still given")
	assert.Contains(t, txt, "torch.profiler (CUDA activity) cost 1.300x")
}

// TestStagesFromNVTX: a program that wrote no workload report (the real
// recording of scripts/cupti/torch_nvtx.py under the library, a PyTorch
// script with NVTX ranges and no deepprof import) gets its stages from its
// NVTX ranges: each range name a stage, each instance a repeat, nested
// ranges under their parent.
func TestStagesFromNVTX(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "byo", t0)
	require.NoError(t, err)
	b, err := os.ReadFile("../../fixtures/cupti/h100-torch-nvtx/cupti-727.tsv")
	require.NoError(t, err)
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.TimelineCupti+"/cupti-727.tsv"), b))
	require.NoError(t, rebuild(run, settings{Regions: regions.DefaultConfig()}))

	m := run.Manifest()
	require.NotNil(t, m.Sources)
	assert.Equal(t, rundir.TimelineCupti, m.Sources.Stages.Path)
	assert.Equal(t, rundir.SourceCuptiStages, m.Sources.Stages.What)

	rep, err := stagesOf(run, settings{})
	require.NoError(t, err)
	require.Contains(t, rep.Stages, "prefill")
	require.Contains(t, rep.Stages, "decode_step")
	assert.Equal(t, "decode_all", rep.Stages["decode_step"].Parent)
	assert.Empty(t, rep.Stages["prefill"].Parent)
	assert.Greater(t, len(rep.Stages["decode_step"].MS), len(rep.Stages["decode_all"].MS), "several steps per decode")
	assert.Nil(t, rep.Stages["prefill"].Processes, "one process: nothing to split")

	sum, err := os.ReadFile(run.Path(rundir.StakeholderSummary))
	require.NoError(t, err)
	assert.Contains(t, string(sum), "decode\\_step")
}

// TestStagesPerProcess: the recorded two-process CUDA program (a parent
// and the child it execs, each with prefill, layer0, decode_all and two
// decode_steps) pools each range's instances and keeps each process's.
func TestStagesPerProcess(t *testing.T) {
	t.Parallel()
	run, err := rundir.Open("../../fixtures/runs/any-cuda-cpp-two-processes")
	require.NoError(t, err)
	rep, err := stagesOf(run, settings{})
	require.NoError(t, err)
	for name, n := range map[string]int{"prefill": 1, "layer0": 1, "decode_all": 1, "decode_step": 2} {
		st := rep.Stages[name]
		require.Len(t, st.Processes, 2, name)
		assert.NotEqual(t, st.Processes[0].ProcessID, st.Processes[1].ProcessID, name)
		var all []float64
		for _, p := range st.Processes {
			assert.Len(t, p.MS, n, "%s in process %d", name, p.ProcessID)
			all = append(all, p.MS...)
		}
		assert.Subset(t, all, st.MS, "%s: the pooled instances are the processes'", name)
	}
}

// processesOf is the CUPTI timeline's TopProcesses of run for the top
// kernels' functions.
func processesOf(run *rundir.Run, functions []string) (phases.TopProcesses, error) {
	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	if err != nil {
		return phases.TopProcesses{}, err
	}
	return phases.TopProcessesOf(tl, functions), nil
}

// TestProcessesOf: the recorded two-process program (the child execs and
// runs first, the parent after it) launched its top kernels in both; the
// child's launches of one configuration are what ncu counts before the
// parent's first. One process has nothing earlier.
func TestProcessesOf(t *testing.T) {
	t.Parallel()
	run, err := rundir.Open("../../fixtures/runs/any-cuda-cpp-two-processes")
	require.NoError(t, err)
	top, err := processesOf(run, []string{"scale_kernel", "add_kernel"})
	require.NoError(t, err)
	require.Len(t, top.Processes, 2)
	assert.Less(t, top.Processes[0].ID, top.Processes[1].ID, "by id")
	assert.Equal(t, "nvtx_ranges", filepath.Base(top.Processes[0].Name))
	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	require.NoError(t, err)
	most := map[int64]int{}
	for _, p := range tl.Processes {
		n := map[string]int{}
		for i := range p.Kernels {
			k := p.Fn(&p.Kernels[i])
			key := model.FunctionName(k.Name()) + k.Grid.String() + k.Block.String()
			n[key]++
			most[p.Header.PID] = max(most[p.Header.PID], n[key])
		}
	}
	assert.Contains(t, []int{most[top.Processes[0].ID], most[top.Processes[1].ID]}, top.EarlierLaunches, "one process's most launches of one configuration")

	one, err := rundir.Open("../../fixtures/runs/any-python-script")
	require.NoError(t, err)
	top, err = processesOf(one, []string{"nvjet_sm90_hsh_64x8_64x16_4x1_v_bz_bias_TNT"})
	require.NoError(t, err)
	assert.Len(t, top.Processes, 1)
	assert.Zero(t, top.EarlierLaunches)
}

// The pooled stage leaves each process's warm-up out: laid end to end,
// the warm-up rule would see only the first process's. SYNTHETIC numbers.
func TestPooledWarmups(t *testing.T) {
	t.Parallel()
	a := workload.ProcessMS{ProcessID: 1, MS: []float64{50, 1, 1, 1, 1}}
	b := workload.ProcessMS{ProcessID: 2, MS: []float64{50, 1, 1, 1, 1}}
	rep := &workload.Report{Stages: map[string]workload.ReportStage{"step": {Processes: []workload.ProcessMS{a, b}}}}
	poolProcesses(rep)
	assert.Equal(t, []float64{1, 1, 1, 1, 1, 1, 1, 1}, rep.Stages["step"].MS)
}

// TestNoNVTXSaysHowToAddRanges: a recording with kernels and no range.
func TestNoNVTXSaysHowToAddRanges(t *testing.T) {
	t.Parallel()
	run, err := rundir.Create(t.TempDir(), "bare", t0)
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(must(os.ReadFile("../../fixtures/cupti/h100-torch-nvtx/cupti-727.tsv"))), "\n") {
		if !strings.HasPrefix(l, "N\t") {
			lines = append(lines, l)
		}
	}
	// synthetic: the real recording without its NVTX lines
	require.NoError(t, rundir.WriteFileAtomic(run.Path(rundir.TimelineCupti+"/cupti-727.tsv"), []byte(strings.Join(lines, "\n"))))
	_, err = stagesOf(run, settings{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "torch.cuda.nvtx.range_push")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestStagesOfTheProgramsDomain: the recorded Qwen2-VL run (PyTorch's
// default-domain ranges, and CCCL's cub::DeviceScan ranges from inside
// the library) times the program's own ranges, the vision encoder and
// projector under prefill, and stage 1's two whole runs; another domain
// is timed only when nvtx.domain names it.
func TestStagesOfTheProgramsDomain(t *testing.T) {
	t.Parallel()
	run, err := rundir.Open("../../fixtures/runs/any-vlm-qwen2-vl")
	require.NoError(t, err)
	rep, err := stagesOf(run, settings{})
	require.NoError(t, err)
	var names []string
	for n := range rep.Stages {
		names = append(names, n)
	}
	assert.ElementsMatch(t, []string{"prefill", "vision_encoder", "projector", "decode_all", "decode_step", workload.WholeProgram}, names)
	assert.Equal(t, "prefill", rep.Stages["vision_encoder"].Parent)
	assert.Equal(t, "prefill", rep.Stages["projector"].Parent)
	assert.Len(t, rep.Stages["prefill"].MS, 3)
	assert.Len(t, rep.Stages[workload.WholeProgram].MS, 2)

	rep, err = stagesOf(run, settings{Domain: "CCCL"})
	require.NoError(t, err)
	for n := range rep.Stages {
		if n != workload.WholeProgram {
			assert.True(t, strings.HasPrefix(n, "CCCL@"), n)
		}
	}

	// No range of the domain: the whole program's run time is the one
	// stage (the summary says to mark phases or name a library's domain).
	rep, err = stagesOf(run, settings{Domain: "LLM"})
	require.NoError(t, err)
	assert.Len(t, rep.Stages, 1)
	assert.Contains(t, rep.Stages, workload.WholeProgram)

	// Without stage 1's runs, that is an error naming the domains there are.
	bare, err := rundir.Create(t.TempDir(), "vlm", t0)
	require.NoError(t, err)
	for _, f := range rundir.CuptiFiles(run) {
		b, err := os.ReadFile(run.Path(f))
		require.NoError(t, err)
		require.NoError(t, rundir.WriteFileAtomic(bare.Path(f), b))
	}
	_, err = stagesOf(bare, settings{Domain: "LLM"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `NVTX ranges only in other domains than nvtx.domain="LLM" ("" (the default domain), "CCCL")`)
}

// TestCollectivesByDevice: SYNTHETIC records of two ranks, one process on
// each device, each with an NCCL all-reduce and a GEMM inside prefill and an
// all-reduce outside it: only the communication kernels inside the phases
// count, by the device that ran them.
func TestCollectivesByDevice(t *testing.T) {
	t.Parallel()
	rec := func(pid, dev int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "#deepprof-cupti/1\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=1000\texe=/usr/bin/python3\n", pid)
		for i, kern := range []struct {
			start, end int
			name       string
		}{{300, 310 + dev, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"}, {320, 330, "nvjet_tst_64x8"}, {400, 450, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"}} {
			fmt.Fprintf(&b, "K\t%d\t%d\t%d\t1\t7\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z%s\t%s\n", kern.start, kern.end, dev, i+1, kern.name, kern.name)
		}
		for i, at := range []int{110, 130, 170} {
			fmt.Fprintf(&b, "A\t%d\t%d\t1\t%d\truntime\t211\tcudaLaunchKernel\n", at, at+5, i+1)
		}
		b.WriteString("N\tpush\t100\t1\t0\t\tprefill\nN\tpop\t160\t1\t0\t\t\nE\t20\t0\n")
		return b.String()
	}
	bld := timeline.NewBuilder()
	require.NoError(t, bld.Read(strings.NewReader(rec(11, 0)), "cupti-11.tsv"))
	require.NoError(t, bld.Read(strings.NewReader(rec(12, 1)), "cupti-12.tsv"))
	tl, err := bld.Build()
	require.NoError(t, err)
	var m workload.Measured
	collectives(&m, tl, map[model.Range]bool{{Name: "prefill"}: true}, settings{}.isCommunication())
	assert.Equal(t, map[model.DeviceID]workload.OraclePhase{0: {KernelMS: 10e-6, Launches: 1}, 1: {KernelMS: 11e-6, Launches: 1}}, m.Collectives)
	assert.Equal(t, map[model.DeviceID]map[string][]float64{0: {"prefill": {10e-6}}, 1: {"prefill": {11e-6}}}, m.CollectiveCalls, "each call, by device and phase")
	assert.Equal(t, map[string]bool{"ncclDevKernel_AllReduce_Sum_bf16_RING_LL": true}, m.CollectiveNames)
}

// stagesOf is the stages a rebuild configured by cfg makes of run's CUPTI
// timeline (cuptiStages), with stage 1's runs where it has them.
func stagesOf(run *rundir.Run, cfg settings) (*workload.Report, error) {
	in := &inputs{rec: rundir.Recorded{CuptiFiles: rundir.CuptiFiles(run)}}
	in.loadTimeline(run, cfg)
	in.files.runs, in.files.runsErr = readStage1Runs(run)
	return cuptiStages(onTimelineOf(in, cfg))
}

// TestConfigTimes: each keep's times by launch configuration come from one
// read of the launches; a keep that admits none takes every launch (as
// the kernel table then takes the program's outermost ranges), and a keep
// that admits some has those only. A recorded run of one process.
func TestConfigTimes(t *testing.T) {
	t.Parallel()
	run, err := rundir.Open("../../fixtures/runs/h200-default-tiny-llama")
	require.NoError(t, err)
	tl, err := timeline.Load(rundir.TimelineCupti, rundir.CuptiFiles(run), run.Open)
	require.NoError(t, err)
	every := func(*timeline.Kernel, *model.Launch) bool { return true }
	none := func(*timeline.Kernel, *model.Launch) bool { return false }
	first := tl.Processes[0].Fn(&tl.Processes[0].Kernels[0]).Name()
	one := func(k *timeline.Kernel, _ *model.Launch) bool { return k.Name() == first }

	ts := configTimes(tl, every, none, one)
	require.Len(t, ts, 3)
	assert.Greater(t, len(ts[0]), 1)
	assert.Equal(t, ts[0], ts[1], "a keep that admits none: every launch")
	require.Len(t, ts[2], 1)
	assert.Equal(t, ts[0][first], ts[2][first])
	assert.Equal(t, ts[0], configTimes(tl, every)[0], "read alone or beside others")
}
