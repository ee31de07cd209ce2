package session

import (
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/phases"
)

// deepLaunchCount is the deep pass's --launch-count, the one rule that
// both its argv and the plan's note follow: ncu.launch_count when set
// (> 0); otherwise, when the pass is filtered on the top kernels,
// ncu.per_kernel_launches (with --filter-mode per-launch-config, that many
// launches of each launch configuration of each kernel), made room for
// every process that launched them (top): ncu counts the limit over every
// process it follows, so each process's share when they run at once, and
// past the earlier processes' own launches when they run one after
// another, up to maxProcessShares shares; otherwise 0, no limit: every
// launch in the NVTX ranges.
func deepLaunchCount(c config.NCU, filtered bool, top phases.TopProcesses) int {
	switch {
	case c.LaunchCount > 0:
		return c.LaunchCount
	case filtered:
		per := c.PerKernelLaunches
		n := len(top.Processes)
		if n < 2 {
			return per
		}
		return min(max(per*n, top.EarlierLaunches+per), per*maxProcessShares)
	}
	return 0
}

// maxProcessShares bounds the deep pass's launch count of a program with
// several CUDA processes, in shares of ncu.per_kernel_launches: each
// profiled launch is replayed tens of times.
const maxProcessShares = 16
