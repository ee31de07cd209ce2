package session

import "github.com/llm-perf-opt/deepprof/harness/config"

// deepLaunchCount is the deep pass's --launch-count, the one rule that
// both its argv and the plan's note follow: ncu.launch_count when set
// (> 0); otherwise, when the pass is filtered on the top kernels,
// ncu.per_kernel_launches (with --filter-mode per-launch-config, that many
// launches of each launch configuration of each kernel) times processes,
// the CUDA processes that launched the top kernels (ncu counts the limit
// over every process it follows: each process's share; 0 or 1 for one);
// otherwise 0, no limit: every launch in the NVTX ranges.
func deepLaunchCount(c config.NCU, filtered bool, processes int) int {
	switch {
	case c.LaunchCount > 0:
		return c.LaunchCount
	case filtered:
		return c.PerKernelLaunches * max(processes, 1)
	}
	return 0
}
