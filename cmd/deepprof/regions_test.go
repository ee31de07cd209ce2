package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const twoproc = "../../fixtures/ncu/cuda-nvtx-twoproc/raw.csv"

func runCmd(args []string, stdin string) (string, string, error) {
	var out, errb bytes.Buffer
	err := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestRegionsCommand(t *testing.T) {
	t.Parallel()
	out, _, err := runCmd([]string{"regions", "--format", "json", "--kernel-include", "add", "--include", "^prefill", twoproc}, "")
	require.NoError(t, err)
	var rep struct {
		Aggregate []struct {
			Name        string  `json:"name"`
			TotalMS     float64 `json:"total_ms"`
			KernelCount int64   `json:"kernel_count"`
		} `json:"aggregate"`
		Scopes []struct {
			ProcessID int64 `json:"process_id"`
			Device    int   `json:"device"`
			Regions   []any `json:"regions"`
		} `json:"scopes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Scopes, 2)
	require.NotEmpty(t, rep.Aggregate)
	assert.Equal(t, "prefill", rep.Aggregate[0].Name)
	assert.EqualValues(t, 4, rep.Aggregate[0].KernelCount, "only add_kernel launches")
	for _, r := range rep.Aggregate {
		assert.True(t, strings.HasPrefix(r.Name, "prefill"), "only regions under prefill: %s", r.Name)
	}

	in, err := os.ReadFile(twoproc)
	require.NoError(t, err)
	md, _, err := runCmd([]string{"regions", "--format", "md", "-"}, string(in))
	require.NoError(t, err)
	assert.Contains(t, md, "# NVTX regions")
	assert.Contains(t, md, `\<stdin\>`, "the source is named")
}

func TestRegionsCommandOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ncu", "regions")
	out, _, err := runCmd([]string{"regions", "--out", dir, twoproc}, "")
	require.NoError(t, err)
	assert.Equal(t, dir+": report.md, report.json and a folder per region written\n", out, "one line saying where, not the report")
	for _, f := range []string{"report.md", "report.json", "prefill/kernels.md", "prefill/kernels.json",
		"prefill/process-1405-device-0/kernels.md"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
}

func TestRegionsCommandErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"regions", "--include", "gemm(", twoproc}, 2, `--include "gemm(": not a valid regular expression`},
		{[]string{"regions", "--exclude", "[", twoproc}, 2, `--exclude "["`},
		{[]string{"regions", "--kernel-include", "add(", twoproc}, 2, `--kernel-include "add(": not a valid regular expression`},
		{[]string{"regions", "--include", "add", twoproc}, 1, twoproc + `: --include "add" matched no region (regions: prefill, prefill/layer0, decode_all, decode_all/decode_step)`},
		{[]string{"regions", "--kernel-exclude", "gemm", twoproc}, 1, twoproc + `: --kernel-exclude "gemm" matched none of the 2 kernel names`},
		{[]string{"regions", "--format", "xml", twoproc}, 2, `--format "xml"`},
		{[]string{"regions", "--metrics", "sol,roofline", twoproc}, 2, `unknown metric group "roofline"`},
		{[]string{"regions"}, 2, "regions takes one FILE"},
		{[]string{"regions", "-"}, 1, "<stdin>:1: empty input"},
	} {
		_, _, err := runCmd(c.args, "")
		require.Error(t, err, c.args)
		assert.Equal(t, c.code, exitCode(err), c.args)
		assert.Contains(t, oneLine(err), c.msg, c.args)
	}
	_, _, err := runCmd([]string{"regions", "-"}, "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"ns\"\n\"0\",\"k\",\"x\"\n")
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, err.Error(), "<stdin>:3:")
}
