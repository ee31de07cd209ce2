package ncu_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

type kindLine struct {
	Kind string
	Line int
}

func kindsOf(fs []ncu.Finding) []kindLine {
	out := []kindLine{}
	for _, f := range fs {
		out = append(out, kindLine{f.Kind, f.Line})
	}
	return out
}

// Every recorded log, with the findings it must give.
func TestDiagnoseFixtures(t *testing.T) {
	want := map[string][]kindLine{
		"logs/cuda-nvtx-record.txt":                           {{ncu.KindNoRanges, 152}},
		"logs/ncu-app-range-replay-mismatch.txt":              {{ncu.KindAppRangeMismatch, 48}},
		"logs/ncu-escaped-at-sign-match.txt":                  {},
		"logs/h100-alone-after-detach.txt":                    {},
		"logs/h200-alone-after-detach.txt":                    {},
		"logs/h200-alone-after-detach-fixed.txt":              {},
		"logs/h200-in-run-c-fixes.txt":                        {}, // in-run.sh's own lines: nothing of ncu's
		"logs/h200-measured-launch-cost-by-metric.txt":        {}, // launch_cost.py's lines
		"logs/h200-default-mixtral-pairs.txt":                 {}, // session_pairs.py's lines
		"logs/ncu-kernel-id-invocations.txt":                  {},
		"logs/ncu-list-sections.txt":                          {},
		"logs/ncu-list-sets.txt":                              {},
		"logs/ncu-no-kernels-profiled-domain-syntax.txt":      {{ncu.KindNVTXNoMatch, 5}},
		"logs/ncu-output-file-plus-log-file.txt":              {{ncu.KindNoReportWithLogFile, 3}},
		"logs/ncu-range-replay-nested-include-with-outer.txt": {},
		"logs/ncu-range-replay-no-nvtx-include.txt":           {{ncu.KindNoRanges, 4}},
		"logs/ncu-range-replay-unsupported-api.txt":           {{ncu.KindRangeReplayUnsupported, 5}},
		"logs/ncu-workload-crash.txt":                         {{ncu.KindWorkloadCrash, 148}},
		"logs/nsys-bundled-no-report.txt":                     {},
		"logs/session-interrupted-during-deep-pass.txt":       {}, // deepprof's own output: nothing of ncu's to diagnose
		"logs/python-no-torch.txt":                            {},
		"logs/hta-temporal-breakdown.txt":                     {}, // Holistic Trace Analysis's output: nothing of ncu's
		"ncu/cuda-app-range-replay/ncu.log":                   {},
		"ncu/cuda-nvtx-domains/ncu.log":                       {},
		"ncu/cuda-nvtx-kernel-replay/ncu.log":                 {},
		"ncu/cuda-nvtx-twoproc/ncu.log":                       {},
		"ncu/cuda-range-replay/ncu.log":                       {},
		"ncu/cuda-range-replay-nested/ncu.log":                {},
	}
	// a new recorded log must be added to the table
	logs, err := filepath.Glob("../../fixtures/logs/*.txt")
	require.NoError(t, err)
	more, err := filepath.Glob("../../fixtures/ncu/*/ncu.log")
	require.NoError(t, err)
	for _, f := range append(logs, more...) {
		rel := strings.TrimPrefix(filepath.ToSlash(f), "../../fixtures/")
		_, ok := want[rel]
		assert.True(t, ok, "fixture %s has no row in this table", rel)
	}
	for rel, w := range want {
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile("../../fixtures/" + rel)
			require.NoError(t, err)
			got := ncu.Diagnose(b)
			assert.Equal(t, w, kindsOf(got))
			lines := strings.Split(string(b), "\n")
			for _, f := range got {
				assert.NotEmpty(t, f.Message)
				assert.NotEmpty(t, f.Next)
				// Text ends with the line it names
				assert.True(t, strings.HasSuffix(f.Text, strings.TrimSuffix(lines[f.Line-1], "\r")), "%q", f.Text)
			}
		})
	}
}

func diagnoseFixture(t *testing.T, rel string) ncu.Finding {
	t.Helper()
	b, err := os.ReadFile("../../fixtures/" + rel)
	require.NoError(t, err)
	fs := ncu.Diagnose(b)
	require.Len(t, fs, 1)
	return fs[0]
}

func TestDiagnoseNVTXNoMatch(t *testing.T) {
	f := diagnoseFixture(t, "logs/ncu-no-kernels-profiled-domain-syntax.txt")
	assert.Equal(t, "==WARNING== No kernels were profiled.", f.Text)
	assert.Contains(t, f.Message, `"LLM@decode_all/"`)
	assert.Contains(t, f.Next, `'LLM@decode_all/' reads 'LLM' as an NVTX domain`)
	assert.Contains(t, f.Next, `write 'LLM\@decode_all/'`) // the form that matched: ncu-escaped-at-sign-match.txt

	// SYNTHETIC: the same warning with no command line, and with an escaped include
	warn := "==WARNING== No kernels were profiled.\n==WARNING== Note that specified NVTX include expressions match only push/pop ranges.\n"
	fs := ncu.Diagnose([]byte(warn))
	require.Len(t, fs, 1)
	assert.Equal(t, ncu.KindNVTXNoMatch, fs[0].Kind)
	assert.Equal(t, 1, fs[0].Line)
	assert.NotContains(t, fs[0].Next, "NVTX domain")
	fs = ncu.Diagnose([]byte("++ ncu --nvtx --nvtx-include 'LLM\\@decode_all/' --nvtx-include=prefill/ -o a python3 wl.py\n" + warn))
	require.Len(t, fs, 1)
	assert.Equal(t, 2, fs[0].Line)
	assert.Contains(t, fs[0].Message, `"LLM\\@decode_all/", "prefill/"`)
	assert.NotContains(t, fs[0].Next, "NVTX domain")
}

func TestDiagnoseWorkloadCrash(t *testing.T) {
	f := diagnoseFixture(t, "logs/ncu-workload-crash.txt")
	lines := strings.Split(f.Text, "\n")
	require.Len(t, lines, 21) // 20 workload lines, then the error
	assert.Equal(t, "TypeError: layer_norm(): argument 'input' (position 1) must be Tensor, not int", lines[19])
	assert.Equal(t, "==ERROR== The application returned an error code (1).", lines[20])
	for _, l := range lines[:20] {
		assert.False(t, strings.HasPrefix(l, "==PROF=="), l)
	}
	assert.Equal(t, "the workload exited with status 1, after a Python exception: TypeError: layer_norm(): argument 'input' (position 1) must be Tensor, not int; ncu still wrote out/h.ncu-rep with the launches profiled before", f.Message)

	// SYNTHETIC: a program that failed with no traceback, and few lines
	fs := ncu.Diagnose([]byte("==PROF== Connected to process 7 (/tmp/app)\ncuda error: out of memory\n==PROF== Disconnected from process 7\n==ERROR== The application returned an error code (2).\n"))
	require.Len(t, fs, 1)
	assert.Equal(t, ncu.KindWorkloadCrash, fs[0].Kind)
	assert.Equal(t, 4, fs[0].Line)
	assert.Equal(t, "cuda error: out of memory\n==ERROR== The application returned an error code (2).", fs[0].Text)
	assert.Equal(t, "the workload exited with status 2", fs[0].Message)
}

// SYNTHETIC lines, for errors no recorded log shows.
func TestDiagnoseSynthetic(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want []kindLine
		next string
	}{
		{
			// ncu's wording as NVIDIA documents the error
			// (https://developer.nvidia.com/ERR_NVGPUCTRPERM): SYNTHETIC, not recorded here
			name: "counter permission",
			log: "==PROF== Connected to process 42 (/usr/bin/python3.12)\n" +
				"==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0. For instructions on enabling permissions and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\n",
			want: []kindLine{{ncu.KindCounterPermission, 2}},
			next: "CAP_SYS_ADMIN",
		},
		{
			// the shape of ncu failing in one of two processes (several
			// processes: docs/any-program.md): SYNTHETIC
			name: "failed to profile in process",
			log:  "==PROF== Profiling \"vectorized_gather_kernel\" - 3: 0%....50%....100% - 10 passes\n==ERROR== Failed to profile \"elementwise_kernel\" in process 578\n",
			want: []kindLine{{ncu.KindProcessProfileFailed, 2}},
			next: "one process at a time",
		},
		{
			name: "no kernels, no NVTX filter",
			log:  "==ERROR== The application returned an error code (1).\n==WARNING== No kernels were profiled.\n==WARNING== Profiling kernels launched by child processes requires the --target-processes all option.\n",
			want: []kindLine{{ncu.KindWorkloadCrash, 1}, {ncu.KindNoKernels, 2}},
			next: "--target-processes all",
		},
		{
			name: "CRLF",
			log:  "==PROF== Connected to process 926 (/tmp/rec/nvtx_ranges)\r\n==WARNING== No ranges were profiled.\r\n",
			want: []kindLine{{ncu.KindNoRanges, 2}},
			next: "--nvtx-include",
		},
		{name: "empty", log: "", want: []kindLine{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ncu.Diagnose([]byte(tt.log))
			assert.Equal(t, tt.want, kindsOf(got))
			if tt.next != "" {
				assert.Contains(t, got[len(got)-1].Next, tt.next)
			}
		})
	}
}

// TestDiagnoseHiddenRunes (issue 16): a kernel name and an exception from
// the profiled program (SYNTHETIC here) are shown escaped in a finding's
// message, which reaches the manifest and the terminal.
func TestDiagnoseHiddenRunes(t *testing.T) {
	f := ncu.Diagnose([]byte("==ERROR== Failed to profile \"k\u202ebad\" in process 578\n"))
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Message, `kernel "k\u202ebad" in process 578`)
	assert.NotContains(t, f[0].Message, "\u202e")
	f = ncu.Diagnose([]byte("Traceback (most recent call last)\n  File \"x.py\"\nValueError: \u202eboom\x07\n==ERROR== The application returned an error code (1).\n"))
	require.Len(t, f, 1)
	assert.Contains(t, f[0].Message, `after a Python exception: ValueError: \u202eboom\u0007`)
}
