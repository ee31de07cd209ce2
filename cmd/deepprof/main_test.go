package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/require"
)

const basic = "../../fixtures/ncu/h200-llama-decode-basic/"

// TestCLIGoldens runs whole commands as main would, and compares what they
// print on each stream, and their exit status, with golden/cli/.
// Regenerate with: go test ./cmd/deepprof -run TestCLIGoldens -update
func TestCLIGoldens(t *testing.T) {
	gz, err := os.ReadFile(basic + "details.csv.gz")
	require.NoError(t, err)
	tests := []struct {
		name  string
		args  []string
		stdin []byte
	}{
		{"kernels-top5-raw", []string{"kernels", "--top", "5", basic + "raw.csv"}, nil},
		{"kernels-json-stdin-gzip-details", []string{"kernels", "--format", "json", "--top", "3", "-"}, gz},
		{"kernels-flags-after-file", []string{"kernels", basic + "raw-units-base.csv", "--top", "2", "--format=json"}, nil},
		{"kernels-log-file", []string{"kernels", "--top", "3", basic + "log-file.csv"}, nil},
		{"kernels-top5-text", []string{"kernels", "--top", "5", "--format", "text", basic + "raw.csv"}, nil},
		{"regions-text", []string{"regions", "--format", "text", "--top", "3", basic + "raw.csv"}, nil},
		{"kernels-no-kernels-profiled", []string{"kernels", "../../fixtures/logs/ncu-no-kernels-profiled-domain-syntax.txt"}, nil},
		{"kernels-no-duration", []string{"kernels", "../../fixtures/ncu/rtx5090-dsocr-kernel_0003_0a7671622339a06b4a022feebfe90426/ncu.section_Occupancy.csv"}, nil},
		{"kernels-missing-file", []string{"kernels", "no-such-export.csv"}, nil},
		{"kernels-bad-top", []string{"kernels", "--top", "-1", basic + "raw.csv"}, nil},
		{"kernels-bad-format", []string{"kernels", "--format", "html", basic + "raw.csv"}, nil},
		{"kernels-two-files", []string{"kernels", basic + "raw.csv", basic + "log-file.csv"}, nil},
		{"kernels-unknown-flag", []string{"kernels", "--topp", "3", basic + "raw.csv"}, nil},
		{"kernels-help", []string{"kernels", "--help"}, nil},
		{"regions-include-region", []string{"regions", "--include", "^decode_all$", "--top", "3", basic + "raw.csv"}, nil},
		{"regions-include-no-match", []string{"regions", "--include", "prefill", basic + "raw.csv"}, nil},
		{"regions-kernel-include", []string{"regions", "--kernel-include", "^nvjet", "--exclude", "step", "--metrics", "sol", "--top", "3", basic + "raw.csv"}, nil},
		{"regions-kernel-include-no-match", []string{"regions", "--kernel-include", "flash_attn", "--exclude", "prefill", basic + "raw.csv"}, nil},
		{"regions-bad-kernel-pattern", []string{"regions", "--kernel-exclude", "gemm(", basic + "raw.csv"}, nil},
		{"regions-help", []string{"regions", "--help"}, nil},
		{"regions-timing-only-log-file", []string{"regions", "--top", "2", basic + "log-file.csv"}, nil},
		{"profile-dry-run", []string{"profile", "--dry-run", "--profiles", "../../profiles", "run.id=demo", "ncu.path=/usr/local/cuda/bin/ncu", "nsys.path=/nonexistent/nsys", "ncu=roofline"}, nil},
		{"profile-dry-run-launch-count-1", []string{"profile", "--dry-run", "--profiles", "../../profiles", "run.id=demo", "ncu.path=/usr/local/cuda/bin/ncu", "ncu.launch_count=1", "timeline.tool=ncu"}, nil},
		{"profile-unknown-key", []string{"profile", "--dry-run", "--profiles", "../../profiles", "ncu.lauch_count=3"}, nil},
		{"profile-bad-group", []string{"profile", "--dry-run", "--profiles", "../../profiles", "ncu=fastest"}, nil},
		{"help", []string{"help"}, nil},
		{"no-command", nil, nil},
		{"unknown-command", []string{"kernel"}, nil},
	}
	fakePreflight(t)
	// Run from cmd/deepprof, the default workload script is not here: the
	// session runs the embedded copy, from the cache (where a session, not
	// a dry run, writes it); the goldens name it <deepprof cache>.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// no toolkit for the CUPTI library, whatever this machine has: the
	// dry run's timeline is the ncu timing pass, and its note says why
	t.Setenv("CUDA_HOME", "/nonexistent/cuda")
	cached := regexp.MustCompile(`\S*/deepprof/workloads/[0-9a-f]+/`)
	g := goldie.New(t, goldie.WithFixtureDir("../../golden/cli"), goldie.WithNameSuffix(""))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(tt.args, bytes.NewReader(tt.stdin), &stdout, &stderr)
			code := 0
			if err != nil {
				code = exitCode(err)
				if err != errUsageShown {
					fmt.Fprintf(&stderr, "deepprof: %s\n", oneLine(err))
				}
			}
			g.Assert(t, tt.name+".stdout", cached.ReplaceAll(stdout.Bytes(), []byte("<deepprof cache>/")))
			g.Assert(t, tt.name+".stderr", cached.ReplaceAll(fmt.Appendf(stderr.Bytes(), "exit status %d\n", code), []byte("<deepprof cache>/")))
		})
	}
}
