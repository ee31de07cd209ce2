package session

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// System returns the machine's own probes, NVML asked about sel.
func System(sel machine.Selection) Probes {
	return Probes{
		GPU: func() (machine.Provenance, error) { return machine.Collect(machine.Open(), sel) },
		Tool: func(ctx context.Context, path string) (machine.Tool, error) {
			return machine.Probe(ctx, path)
		},
		LookPath: exec.LookPath,
		IsFile:   isFile,
		Run:      run,
	}
}

func isFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file", path)
	}
	return nil
}

// run runs argv (no shell) with env added, stdout and stderr in one buffer.
func run(ctx context.Context, argv, env []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
