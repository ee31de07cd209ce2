package session

import "github.com/llm-perf-opt/deepprof/harness/config"

// deepLaunchCount is the deep pass's --launch-count, the one rule that
// both its argv and the plan's note follow: ncu.launch_count when set
// (> 0); otherwise, when the pass is filtered on the top kernels,
// ncu.per_kernel_launches (with --filter-mode per-launch-config, that many
// launches of each launch configuration of each kernel); otherwise 0, no
// limit: every launch in the NVTX ranges.
func deepLaunchCount(c config.NCU, filtered bool) int {
	switch {
	case c.LaunchCount > 0:
		return c.LaunchCount
	case filtered:
		return c.PerKernelLaunches
	}
	return 0
}
