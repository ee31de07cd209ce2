package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestProfileVerdict: what deepprof profile prints when done, and how it
// exits, for each way a run ends.
func TestProfileVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mark    func(*rundir.Run)
		err     error
		stdout  string // after "MAIN: <dir>\n"
		wantErr string // "" for success; <dir> stands for MAIN
	}{
		{"complete", func(*rundir.Run) {}, nil, "complete\n", ""},
		{"partial", func(r *rundir.Run) {
			r.MarkPartial("interrupted during ncu-deep (stopped after 1.5s); the steps before it are kept")
		}, errors.New("deep pass: ncu-deep interrupted after 1.5s"),
			"partial: interrupted during ncu-deep (stopped after 1.5s); the steps before it are kept\n",
			"run partial: interrupted during ncu-deep (stopped after 1.5s); the steps before it are kept (see <dir>/report.md)"},
		{"failed", func(r *rundir.Run) { r.MarkFailed("stage 1: the workload wrote no report") }, errors.New("x"),
			"failed: stage 1: the workload wrote no report\n", "run failed: stage 1: the workload wrote no report (see <dir>/report.md)"},
		{"complete but the manifest not written", func(*rundir.Run) {}, errors.New("manifest.json: disk full"),
			"complete\n", "manifest.json: disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := rundir.Create(t.TempDir(), "run-1", time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC))
			require.NoError(t, err)
			tt.mark(run)
			require.NoError(t, run.WriteManifest(time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)))
			opened, err := harness.OpenRun(run.Dir)
			require.NoError(t, err)
			var stdout bytes.Buffer
			err = verdict(&stdout, opened, tt.err)
			assert.Equal(t, "MAIN: "+run.Dir+"\n"+tt.stdout, stdout.String())
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			want := bytes.ReplaceAll([]byte(tt.wantErr), []byte("<dir>"), []byte(run.Dir))
			assert.Equal(t, filepath.FromSlash(string(want)), err.Error())
			assert.Equal(t, 1, exitCode(err))
		})
	}

	// No run directory at all: the error as it is.
	var stdout bytes.Buffer
	err := verdict(&stdout, nil, rundir.ErrRunExists)
	assert.ErrorIs(t, err, rundir.ErrRunExists)
	assert.Empty(t, stdout.String())
}

// TestDryRunEscapesControlCharacters (issue 27): a value holding a newline or
// an escape sequence is shown escaped in the dry run, so it cannot print a
// line that looks like one of the plan's (here, a fake argv line).
func TestDryRunEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	out, _, err := runCmd([]string{"profile", "--dry-run", "--no-preflight", "--profiles", profilesDir(t),
		"+workload.env.MINE=x\n   argv: /bin/rm -rf /\x1b[2J", "--", "my-program", "a\nb"}, "")
	require.NoError(t, err)
	for _, l := range strings.Split(out, "\n") {
		assert.NotEqual(t, "   argv: /bin/rm -rf /", l, "a value printed a plan line")
		assert.NotContains(t, l, "\x1b", "an escape sequence printed raw")
	}
	assert.Contains(t, out, `env: MINE=x\u000a   argv: /bin/rm -rf /\u001b[2J`)
	assert.Contains(t, out, `'a\u000ab'`)
}
