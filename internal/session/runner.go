package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command is one program to run: an argv, never a shell string.
type Command struct {
	Argv   []string
	Env    []string // added to the harness's own environment; later entries win
	Dir    string
	Stdout io.Writer
	Stderr io.Writer
}

// Result is how a command ended.
type Result struct {
	ExitCode int // -1 when killed by a signal
	// Signal is the signal that killed the command; 0 when it exited.
	Signal      syscall.Signal
	Interrupted bool // the context ended first (Ctrl-C, a step's deadline): the command was stopped
	Duration    time.Duration
}

// Runner runs commands. Sessions take one, so tests can replay recorded tool
// output instead of running profilers. A session may call Run from several
// goroutines at once (the deep pass's exports).
type Runner interface {
	Run(ctx context.Context, c Command) (Result, error)
}

// ExecRunner runs real programs. Each runs in its own process group; when
// the context ends (Ctrl-C, or the step's deadline: the session gives each
// step a context with its deadline) the whole group gets SIGINT, so ncu
// can write what it has, then SIGKILL after Grace.
type ExecRunner struct {
	Grace time.Duration // default 10s
}

// Run runs c. The error is only for a command that could not start; a
// non-zero exit is a Result.
func (e ExecRunner) Run(ctx context.Context, c Command) (Result, error) {
	if len(c.Argv) == 0 {
		return Result{}, errors.New("run: empty argv")
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("start %s: %w", c.Argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	grace := e.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	var err error
	interrupted := false
	select {
	case err = <-done:
	case <-ctx.Done():
		interrupted = true
		pgid := cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGINT)
		select {
		case err = <-done:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			err = <-done
		}
		// Whatever the leader did, leave nothing of the group behind.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	res := Result{Interrupted: interrupted, Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	default:
		return res, err
	}
	return res, nil
}
