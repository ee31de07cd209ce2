package session

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// torchrunFake plays torchrun --no-python over fakeTools: it starts the
// program once per rank with RANK set, each rank's records going to the
// CUPTI folder as cupti-<pid>.tsv.gz (a recorded two-process run's files,
// one per rank); the rank wrapper (Script) is played by
// rankExec, what the script does, so that each rank's ncu sees its own argv.
type torchrunFake struct {
	*fakeTools
	n        int
	launches [][]string // each launcher invocation's argv
	envs     [][]string // and its environment additions
	rankArgv [][]string // what each rank ran
	failRank int        // a rank whose ncu writes no report (-1 none)
	records  []string   // each rank's record file, by rank modulo its length; nil: rankRecords
	node     int        // this node's number: its ranks are node*n+r ($RANK), r ($LOCAL_RANK)
}

var rankRecords = []string{"cupti/h100-nvtx-ranges/twoproc-exec/cupti-676.tsv", "cupti/h100-nvtx-ranges/twoproc-exec/cupti-677.tsv"}

func (f *torchrunFake) Run(ctx context.Context, c Command) (Result, error) {
	i := slices.Index(c.Argv, "--no-python")
	if !slices.Contains(c.Argv, "torch.distributed.run") || i < 0 {
		return f.fakeTools.Run(ctx, c)
	}
	f.launches = append(f.launches, c.Argv)
	f.envs = append(f.envs, c.Env)
	prog := c.Argv[i+1:]
	var res Result
	for r := range f.n {
		argv := prog
		if len(prog) > 1 && strings.HasSuffix(prog[1], "rank-exec.py") {
			argv = rankExec(prog[2:], f.node*f.n+r, r)
			if r == f.failRank && filepath.Base(argv[0]) == "ncu" {
				f.rankArgv = append(f.rankArgv, argv)
				// This rank's ncu logs and writes no report.
				log := argv[slices.Index(argv, "--log-file")+1]
				if err := os.WriteFile(log, []byte("==PROF== Connected to process\n"), 0o644); err != nil {
					return Result{}, err
				}
				continue
			}
		}
		f.rankArgv = append(f.rankArgv, argv)
		env := append(slices.Clone(c.Env), "RANK="+strconv.Itoa(f.node*f.n+r))
		if dir, ok := envValue(c.Env, EnvOutDir); ok {
			// each rank writes its own record file
			recs := rankRecords
			if f.records != nil {
				recs = f.records
			}
			rec := recs[r%len(recs)]
			if err := copyFile(fx+rec, filepath.Join(dir, filepath.Base(rec))); err != nil {
				return Result{}, err
			}
		}
		if r > 0 { // one report per run: rank 0's
			env = slices.DeleteFunc(env, func(e string) bool {
				return strings.HasPrefix(e, "DEEPPROF_REPORT=") || strings.HasPrefix(e, EnvOutDir+"=")
			})
		}
		rr, err := f.fakeTools.Run(ctx, Command{Argv: argv, Env: env, Stdout: c.Stdout, Stderr: c.Stderr})
		if err != nil {
			return rr, err
		}
		if rr.ExitCode != 0 {
			res = rr
		}
	}
	return res, nil
}

// runRanks runs a session of cfg with the launcher f, the CUPTI library
// faked.
func runRanks(t *testing.T, f *torchrunFake, cfg *config.Config) (*rundir.Run, error) {
	t.Helper()
	s := newSession(t, cfg, f.fakeTools)
	s.Runner = f
	s.CUPTI = fakeCUPTI(t, true)
	return s.Run(context.Background())
}

// rankExec is what rank_exec.py does with its
// arguments in rank r, local rank local.
func rankExec(args []string, r, local int) []string {
	only, program := -1, 0
	for len(args) > 0 && args[0] != "--" {
		v, _ := strconv.Atoi(args[1])
		if args[0] == "--only" {
			only = v
		} else {
			program = v
		}
		args = args[2:]
	}
	args = args[1:]
	if only >= 0 && only != local {
		args = args[len(args)-program:]
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, rundir.RankPlaceholder, strconv.Itoa(r))
		if strings.Contains(out[i], "/ranks/rank"+strconv.Itoa(r)+"/") {
			os.MkdirAll(filepath.Dir(out[i]), 0o755) // as the wrapper does
		}
	}
	return out
}

func envValue(env []string, key string) (string, bool) {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func rankConfig(t *testing.T, root, mode string) *config.Config {
	cfg := testConfig(t, root)
	cfg.NVTX.Include = nil
	cfg.Timeline.Oracle = false
	cfg.Device = "cuda:2"
	cfg.Workload.Launcher = config.Launcher{Kind: config.LauncherTorchrun, NprocPerNode: 2, Argv: []string{}, DeepPass: mode, DeepRanks: config.DeepRanksAll}
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestSessionRanks: a two-rank workload under torchrun. Every step runs
// under the launcher with both GPUs visible; the deep pass is one ncu per
// rank started by the wrapper the session wrote (never one ncu around the
// launcher), each rank's report exported into ncu/ranks/rank<R>/, and the
// rebuild reads both ranks' exports.
func TestSessionRanks(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{config.DeepLockstep, config.DeepOneAtATime} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			f := &torchrunFake{fakeTools: cuptiFake(), n: 2, failRank: -1}
			f.cuptiRun = ""
			run, err := runRanks(t, f, rankConfig(t, root, mode))
			require.NoError(t, err)
			m := run.Manifest()
			assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)

			for _, argv := range f.launches {
				assert.Equal(t, []string{"python3", "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", "--no-python"}, argv[:7])
			}
			for _, env := range f.envs {
				assert.Contains(t, env, "CUDA_VISIBLE_DEVICES=2,3")
			}
			for _, argv := range f.calls {
				if filepath.Base(argv[0]) == "ncu" && !slices.Contains(argv, "--import") && !slices.Contains(argv, "--list-sections") {
					assert.NotContains(t, argv, "torch.distributed.run", "ncu runs inside a rank, never around the launcher")
				}
			}
			deeps := 0
			for _, argv := range f.rankArgv {
				if filepath.Base(argv[0]) == "ncu" {
					deeps++
					out := argv[slices.Index(argv, "-o")+1]
					assert.Regexp(t, `/ncu/ranks/rank[01]/deep$`, out)
				}
			}
			assert.Equal(t, 2, deeps, "one ncu per rank")
			if mode == config.DeepOneAtATime {
				assert.Len(t, f.launches, 2+2, "stage1, timeline, two deep passes")
			} else {
				assert.Len(t, f.launches, 2+1, "stage1, timeline, one deep pass")
			}
			for r := range 2 {
				for _, rel := range []string{rundir.NcuDeepReport, rundir.NcuRaw, rundir.NcuDetails} {
					assert.FileExists(t, run.Path(rundir.RankPath(strconv.Itoa(r), rel)))
				}
			}
			script, err := os.ReadFile(run.Path(rundir.NcuRankExec))
			require.NoError(t, err)
			assert.Contains(t, string(script), "os.execvp")

			// The rebuild read both ranks' deep-pass exports: the summary
			// has the deep metrics of the top kernels.
			sum, err := os.ReadFile(run.Path(rundir.SummaryJSON))
			require.NoError(t, err)
			assert.NotContains(t, string(sum), "no deep-pass export")
			assert.Equal(t, []string{rundir.RankPath("0", rundir.NcuRaw), rundir.RankPath("1", rundir.NcuRaw)}, run.ExportFiles(rundir.NcuRaw))
		})
	}
}

// TestSessionRanksSameKernels: with workload.launcher.deep_ranks=auto, the
// deep pass one rank at a time profiles rank 0 alone when the CUPTI
// timeline shows both ranks launching the same top kernels in the same
// launch configurations (each rank here records what one process of the
// two-process program recorded), and says so; ranks that launched
// different ones (the second rank's records here are another program's,
// with axpy_kernel beside the other two) are each profiled.
func TestSessionRanksSameKernels(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		records  []string
		profiled int
	}{
		{"same", rankRecords, 1},
		{"different", []string{rankRecords[0], "cupti/h100-nvtx-ranges/ranges/cupti-631.tsv"}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			f := &torchrunFake{fakeTools: cuptiFake(), n: 2, failRank: -1, records: c.records}
			f.cuptiRun = ""
			cfg := rankConfig(t, root, config.DeepOneAtATime)
			cfg.Workload.Launcher.DeepRanks = config.DeepRanksAuto
			run, err := runRanks(t, f, cfg)
			require.NoError(t, err)
			m := run.Manifest()
			assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
			assert.Len(t, f.launches, 2+c.profiled, "stage1, timeline, a deep pass per profiled rank")
			// Each rank's ncu follows one process: the kernels by exact
			// name, one launch of each launch configuration.
			for _, argv := range f.rankArgv {
				if filepath.Base(argv[0]) == "ncu" {
					assert.Equal(t, "mangled", argv[slices.Index(argv, "--kernel-name-base")+1])
					assert.Contains(t, argv[slices.Index(argv, "--kernel-name")+1], "_Z10add_kernelPKfS0_Pfi")
					assert.Equal(t, "1", argv[slices.Index(argv, "--launch-count")+1])
				}
			}
			notes := strings.Join(m.Notes, "\n")
			for r := range 2 {
				if r < c.profiled {
					assert.FileExists(t, run.Path(rundir.RankPath(strconv.Itoa(r), rundir.NcuRaw)))
				} else {
					assert.NoFileExists(t, run.Path(rundir.RankPath(strconv.Itoa(r), rundir.NcuDeepReport)))
				}
			}
			if c.profiled == 1 {
				assert.Contains(t, notes, "deep pass: rank 0 alone (workload.launcher.deep_ranks=auto): in the CUPTI timeline the 2 processes that launched the top kernels launched the same ones in the same launch configurations")
			} else {
				assert.NotContains(t, notes, "rank 0 alone")
			}
			assert.NotContains(t, notes, "ranks profiled; the kernels of the others have no deep metrics")
		})
	}
}

// TestSessionRanksSecondNode: the session of one node of a two-node run
// (the launcher's own argv), whose launcher gave its ranks the global
// ranks 2 and 3: the wrapper names their deep passes by those ($RANK); the
// steps and the launcher's consoles are named by the local ranks (the
// global ones are the rendezvous's to give), the consoles outside
// ncu/ranks/, so that merging it with the other node's collides on nothing.
func TestSessionRanksSecondNode(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &torchrunFake{fakeTools: cuptiFake(), n: 2, failRank: -1, node: 1}
	f.cuptiRun = ""
	cfg := rankConfig(t, root, config.DeepOneAtATime)
	cfg.Workload.Launcher.Argv = []string{"python3", "-m", "torch.distributed.run", "--nnodes", "2", "--node-rank", "1", "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:29533"}
	// deep_ranks=auto, and the two ranks launched the same kernels: a node
	// still profiles each of its ranks, as every node must run as many
	// deep-pass runs as the others.
	cfg.Workload.Launcher.DeepRanks = config.DeepRanksAuto
	run, err := runRanks(t, f, cfg)
	require.NoError(t, err)
	m := run.Manifest()
	assert.Equal(t, rundir.StatusComplete, m.Status, m.Reason)
	var steps []string
	for _, st := range m.Steps {
		steps = append(steps, st.Name)
	}
	assert.Contains(t, steps, "ncu-deep (local rank 0)")
	assert.Contains(t, steps, "ncu-deep (local rank 1)")
	for _, r := range []string{"2", "3"} {
		assert.FileExists(t, run.Path(rundir.RankPath(r, rundir.NcuRaw)))
	}
	for _, r := range []string{"0", "1"} {
		assert.NoDirExists(t, run.Path(rundir.RankPath(r, "")))
		assert.FileExists(t, run.Path("ncu/console-local-rank"+r+".log"))
	}
}

// TestSessionRanksOneRankFails: a rank whose ncu writes no report leaves
// the run partial, the other rank's report kept and used.
func TestSessionRanksOneRankFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	f := &torchrunFake{fakeTools: cuptiFake(), n: 2, failRank: 1}
	f.cuptiRun = ""
	run, err := runRanks(t, f, rankConfig(t, root, config.DeepLockstep))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rank 1: ncu wrote no report")
	m := run.Manifest()
	assert.Equal(t, rundir.StatusPartial, m.Status)
	a, ok := m.Find(rundir.RankPath("1", rundir.NcuDeepReport))
	require.True(t, ok)
	assert.Equal(t, rundir.StatusMissing, a.Status)
	assert.FileExists(t, run.Path(rundir.RankPath("0", rundir.NcuRaw)))
	assert.Equal(t, []string{rundir.RankPath("0", rundir.NcuRaw)}, run.ExportFiles(rundir.NcuRaw))
	assert.Contains(t, strings.Join(m.Notes, "\n"), "1 of 2 ranks profiled")
}

// A multi-GPU workload refuses a timeline that replays its collectives.
func TestSessionRanksRefuseNcuTimeline(t *testing.T) {
	t.Parallel()
	cfg := rankConfig(t, t.TempDir(), config.DeepLockstep)
	cfg.Timeline.Tool = "ncu"
	s := newSession(t, cfg, cuptiFake())
	_, err := s.Plan("/main", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs the CUPTI timeline")
}
