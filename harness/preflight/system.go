package preflight

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/llm-perf-opt/deepprof/harness/gpu"
	"github.com/llm-perf-opt/deepprof/harness/tools"
)

// System returns the machine's own probes, NVML asked about sel.
func System(sel gpu.Selection) Probes {
	return Probes{
		GPU: func() (gpu.Provenance, error) { return gpu.Collect(gpu.Open(), sel) },
		Tool: func(ctx context.Context, path string) (tools.Tool, error) {
			return tools.Probe(ctx, path)
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
