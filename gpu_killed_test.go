//go:build gpu

package deepprof_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/session"
)

// killedProgram launches small kernels until it is killed; it prints
// "started" once its first kernel has run.
const killedProgram = `
import torch
x = torch.ones(1 << 16, device="cuda")
torch.cuda.synchronize()
print("started", flush=True)
while True:
    x = x * 1.0001 + 1.0
`

// TestStage2KilledKeepsRecords (issue 50): a program SIGKILLed 0.3 s after
// its GPU work began keeps its records: the CUPTI library flushes by
// record count as well as every second, so the kernels and launch calls of
// those 0.3 s are in its file, cut short and said so.
func TestStage2KilledKeepsRecords(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	lib, err := session.Build(context.Background(), session.Options{})
	require.NoError(t, err)
	dir := t.TempDir()
	script := filepath.Join(dir, "killed.py")
	require.NoError(t, os.WriteFile(script, []byte(killedProgram), 0o644))
	cmd := exec.Command("python3", script)
	cmd.Env = append(os.Environ(), session.Env(lib, dir)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(out)
	started := false
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "started" {
			started = true
			break
		}
	}
	require.True(t, started, "the program never started its GPU work")
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	files, err := filepath.Glob(filepath.Join(dir, "cupti-*.tsv"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	f, err := os.Open(files[0])
	require.NoError(t, err)
	defer f.Close()
	r := cupti.NewReader(f, files[0])
	kernels, apis := 0, 0
	for r.Scan() {
		switch r.Record().(type) {
		case *cupti.KernelRecord:
			kernels++
		case *cupti.API:
			apis++
		}
	}
	require.NoError(t, r.Err())
	t.Logf("%s: %d kernels, %d launch calls kept; %s", files[0], kernels, apis, r.Truncation())
	assert.NotEmpty(t, r.Truncation(), "a killed process's file is cut short")
	assert.Greater(t, kernels, 100, "the kernels run before the kill are kept")
	assert.Greater(t, apis, 100, "the launch calls made before the kill are kept")
}
