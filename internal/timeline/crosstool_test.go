package timeline_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// regionCounts is a scope's regions as name -> inclusive kernel count, and
// its launches outside every range under the name "(outside)".
func regionCounts(launches, outside int64, rs []facts.Region) map[string]int64 {
	m := map[string]int64{"(outside)": outside, "(launches)": launches}
	for _, r := range rs {
		m[r.Name] = r.KernelCount
	}
	return m
}

// TestSameRegionsAsNcu is issue 13's "a CUDA C++ program
// (scripts/fixtures/nvtx_ranges.cu, with its named domains) gives the same
// region names through CUPTI as through ncu": the real CUPTI recordings of
// fixtures/cupti/h100-nvtx-ranges against the ncu exports recorded from the
// same program and mode (fixtures/ncu/cuda-nvtx-*: ncu --nvtx, kernel
// replay, no NVTX filter), through the same regions aggregator. Region
// names, their kernel counts, the launches and those outside every range
// agree per process. Kernel names are not compared: the two tools demangle
// differently (CUPTI "add_kernel(float const*, float const*, float*, int)",
// ncu "add_kernel(const float *, const float *, float *, int)"), and the
// durations are different runs.
func TestSameRegionsAsNcu(t *testing.T) {
	for _, tc := range []struct {
		name, cupti, ncu string
		// cuptiProcesses is how many processes have kernels in the CUPTI
		// recording, when it is fewer than ncu's (the why is in the row).
		cuptiProcesses int
	}{
		{"ranges", "h100-nvtx-ranges/ranges", "cuda-nvtx-kernel-replay", 1},
		// Domain LLM, names with '/', '@', ':', quotes; "serve" (default
		// domain) and LLM's decode_all open together: one stack per
		// thread, domains mixed, in both tools.
		{"domains", "h100-nvtx-ranges/domains", "cuda-nvtx-domains", 1},
		// fork + exec: both processes in both tools.
		{"twoproc-exec", "h100-nvtx-ranges/twoproc-exec", "cuda-nvtx-twoproc", 2},
		// A bare fork: ncu profiled both processes, but the child ends
		// with _exit, which runs no atexit handler, so the library never
		// flushed CUPTI's buffers in it: its file is a header only (cut
		// short) and only the parent's kernels are in the CUPTI
		// recording. The parent's regions agree.
		{"twoproc", "h100-nvtx-ranges/twoproc", "cuda-nvtx-twoproc", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := timeline.ReadFiles(realFiles(tc.cupti)...)
			require.NoError(t, err)
			cfg := regions.Config{Aggregate: true}
			ra, err := regions.New(cfg)
			require.NoError(t, err)
			for l := range tl.Launches() {
				require.NoError(t, ra.Add(tc.name, l, false))
			}
			cr := ra.Report(tc.name)

			path := "../../fixtures/ncu/" + tc.ncu + "/raw.csv"
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			nr, err := regions.FromReader(ncu.NewReader(f, path, ncu.Options{Metrics: regions.RawMetrics(cfg.Groups)}), path, cfg)
			require.NoError(t, err)

			// Per process, in process id order (the two runs' ids differ;
			// in both runs the parent's id is the smaller).
			require.Len(t, cr.Scopes, tc.cuptiProcesses)
			require.GreaterOrEqual(t, len(nr.Scopes), tc.cuptiProcesses)
			for i, cs := range cr.Scopes {
				ns := nr.Scopes[i]
				assert.Equal(t, regionCounts(ns.Launches, ns.OutsideLaunches, ns.Regions),
					regionCounts(cs.Launches, cs.OutsideLaunches, cs.Regions), "process %d (CUPTI pid %d, ncu pid %d)", i, cs.ProcessID, ns.ProcessID)
				var names []string
				for _, r := range ns.Regions {
					names = append(names, r.Name)
				}
				var cnames []string
				for _, r := range cs.Regions {
					cnames = append(cnames, r.Name)
				}
				assert.Equal(t, names, cnames, "regions listed in the same order")
			}
			if len(cr.Scopes) == len(nr.Scopes) {
				assert.Equal(t, regionCounts(nr.Launches, nr.OutsideLaunches, nr.Aggregate),
					regionCounts(cr.Launches, cr.OutsideLaunches, cr.Aggregate), "the aggregate")
			} else {
				// The processes CUPTI lacks: files cut short with no kernels.
				var empty int
				for _, p := range tl.Processes {
					if len(p.Kernels) == 0 {
						assert.NotEmpty(t, p.Truncation, p.File)
						empty++
					}
				}
				assert.Equal(t, len(nr.Scopes)-len(cr.Scopes), empty)
			}
		})
	}
}
