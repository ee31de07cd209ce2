package session

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// TestDeepLaunchCountNoteMatchesArgv: the number of launches the plan's
// note promises is the --launch-count of the deep pass's argv, in the dry
// run (top kernels not known yet: the argv of the pass that will run once
// they are) and once the top kernels are known. The dry run of
// `ncu.launch_count=1` said "2 launch(es)" above `--launch-count 1`.
func TestDeepLaunchCountNoteMatchesArgv(t *testing.T) {
	t.Parallel()
	launches := regexp.MustCompile(`(\d+) launch\(es\)`)
	noteCount := func(t *testing.T, steps []Step) int {
		st := deepStep(t, steps)
		m := launches.FindStringSubmatch(st.Note)
		if m == nil {
			return 0 // "every launch in the NVTX ranges"
		}
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		return n
	}
	for _, lc := range []int{0, 1, 3} {
		for _, per := range []int{1, 2} {
			t.Run(fmt.Sprintf("launch_count=%d,per_kernel_launches=%d", lc, per), func(t *testing.T) {
				cfg := testConfig(t, "/runs")
				cfg.Timeline.Tool = "ncu"
				cfg.NCU.LaunchCount, cfg.NCU.PerKernelLaunches = lc, per
				s := newSession(t, cfg, &fakeTools{})
				dry, err := s.Plan("/runs/run-1", nil)
				require.NoError(t, err)
				known, err := s.Plan("/runs/run-1", []string{"nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN", "rms_norm_kernel"})
				require.NoError(t, err)
				assert.Equal(t, argvLaunchCount(t, deepStep(t, known)), noteCount(t, dry), "dry run's note against the argv that runs")
				assert.Equal(t, argvLaunchCount(t, deepStep(t, known)), noteCount(t, known), "note against argv")
				if n := argvLaunchCount(t, deepStep(t, dry)); n > 0 {
					assert.Equal(t, n, noteCount(t, dry), "the dry run's own argv")
				}
				none, err := s.Plan("/runs/run-1", []string{})
				require.NoError(t, err)
				assert.Equal(t, argvLaunchCount(t, deepStep(t, none)), lc, "no top kernels: ncu.launch_count alone")
				assert.Equal(t, noteCount(t, none), 0, deepStep(t, none).Note)
			})
		}
	}
}

func deepStep(t *testing.T, steps []Step) Step {
	t.Helper()
	i := slices.IndexFunc(steps, func(s Step) bool { return s.ID == StepNcuDeep })
	require.GreaterOrEqual(t, i, 0, "no ncu-deep step")
	return steps[i]
}

// argvLaunchCount is the --launch-count of argv, 0 when it has none.
func argvLaunchCount(t *testing.T, st Step) int {
	t.Helper()
	i := slices.Index(st.Argv, "--launch-count")
	if i < 0 {
		return 0
	}
	require.Less(t, i+1, len(st.Argv))
	n, err := strconv.Atoi(st.Argv[i+1])
	require.NoError(t, err)
	return n
}

// The deep pass's count for several processes: each one's share when they
// run at once, past the earlier ones' launches when they run one after
// another, never past maxProcessShares shares.
func TestDeepLaunchCountProcesses(t *testing.T) {
	t.Parallel()
	c := config.NCU{PerKernelLaunches: 2}
	procs := []phases.ProcessRef{{ID: 1}, {ID: 2}, {ID: 3}}
	assert.Equal(t, 2, deepLaunchCount(c, true, phases.TopProcesses{Processes: procs[:1]}))
	assert.Equal(t, 6, deepLaunchCount(c, true, phases.TopProcesses{Processes: procs, EarlierLaunches: 1}), "a share each")
	assert.Equal(t, 9, deepLaunchCount(c, true, phases.TopProcesses{Processes: procs, EarlierLaunches: 7}), "past the earlier ones")
	assert.Equal(t, 2*maxProcessShares, deepLaunchCount(c, true, phases.TopProcesses{Processes: procs, EarlierLaunches: 5000}), "bounded")
	assert.Equal(t, 0, deepLaunchCount(c, false, phases.TopProcesses{Processes: procs}), "unfiltered: every launch")
	c.LaunchCount = 5
	assert.Equal(t, 5, deepLaunchCount(c, true, phases.TopProcesses{Processes: procs, EarlierLaunches: 7}), "ncu.launch_count wins")
}
