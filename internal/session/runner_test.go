package session

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// The test binary doubles as the programs the runner runs: with
// DEEPPROF_TEST_HELPER set it acts instead of testing.
func TestMain(m *testing.M) {
	synth.CollectLess()
	runFakeCompiler()
	switch os.Getenv("DEEPPROF_TEST_HELPER") {
	case "exit3":
		fmt.Println("out")
		fmt.Fprintln(os.Stderr, "err", os.Getenv("EXTRA"))
		os.Exit(3)
	case "parent":
		// Start a grandchild in the same process group, print its pid, wait.
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "DEEPPROF_TEST_HELPER=sleep")
		if err := c.Start(); err != nil {
			os.Exit(9)
		}
		fmt.Println(c.Process.Pid)
		_ = c.Wait()
		time.Sleep(time.Minute)
		os.Exit(0)
	case "sleep":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "killed":
		// A program the OOM killer ends.
		fmt.Println("allocating")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
		os.Exit(0)
	case "hang":
		// A workload that hangs and ignores SIGINT: only SIGKILL ends it.
		signal.Ignore(syscall.SIGINT)
		fmt.Printf("pid=%d loading the model\n", os.Getpid())
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	flag.Parse()
	moreAtOnce()
	os.Exit(m.Run())
}

// moreAtOnce lets twice as many tests run at once as the machine has
// cores (go test's -parallel default), unless -parallel is given: most of
// this package's tests wait on processes and deadlines.
func moreAtOnce() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

func TestExecRunnerExitAndStreams(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	res, err := ExecRunner{}.Run(context.Background(), Command{Argv: []string{os.Args[0]},
		Env: []string{"DEEPPROF_TEST_HELPER=exit3", "EXTRA=x"}, Stdout: &out, Stderr: &errb})
	require.NoError(t, err)
	assert.Equal(t, 3, res.ExitCode)
	assert.False(t, res.Interrupted)
	assert.Equal(t, "out\n", out.String())
	assert.Equal(t, "err x\n", errb.String())

	_, err = ExecRunner{}.Run(context.Background(), Command{Argv: []string{"/no/such/ncu"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "start /no/such/ncu")
}

// TestExecRunnerNamesTheSignal (issue 35): a program killed by a signal
// says which, and what usually sends it ("exited with status -1" named
// none).
func TestExecRunnerNamesTheSignal(t *testing.T) {
	t.Parallel()
	res, err := ExecRunner{}.Run(context.Background(), Command{Argv: []string{os.Args[0]}, Env: []string{"DEEPPROF_TEST_HELPER=killed"}})
	require.NoError(t, err)
	assert.Equal(t, syscall.SIGKILL, res.Signal)
	assert.Equal(t, "SIGKILL", signalName(res.Signal))
	assert.Contains(t, signalWhy(res.Signal), "out-of-memory killer")
}

// TestExecRunnerKillsTheGroup: an interrupted command takes its children
// with it (a profiler's workload must not outlive the session).
func TestExecRunnerKillsTheGroup(t *testing.T) {
	t.Parallel() // it waits on real processes and deadlines
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	resc := make(chan Result, 1)
	go func() {
		res, err := ExecRunner{Grace: 200 * time.Millisecond}.Run(ctx, Command{Argv: []string{os.Args[0]},
			Env: []string{"DEEPPROF_TEST_HELPER=parent"}, Stdout: pw})
		assert.NoError(t, err)
		resc <- res
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	cancel()
	res := <-resc
	assert.True(t, res.Interrupted)
	require.Eventually(t, func() bool {
		return syscall.Kill(grandchild, 0) != nil
	}, 5*time.Second, 20*time.Millisecond, "grandchild %d still runs", grandchild)
}

// TestExecRunnerDeadline: at the context's deadline the group gets SIGINT;
// a program that ignores it is killed after the grace, one that does not
// ends at once.
func TestExecRunnerDeadline(t *testing.T) {
	t.Parallel() // it waits on real processes and deadlines
	const timeout = 800 * time.Millisecond
	for _, tc := range []struct {
		helper   string
		grace    time.Duration
		min, max time.Duration // generous: the machine may be busy
	}{
		{"hang", 400 * time.Millisecond, timeout + 400*time.Millisecond, timeout + 4*time.Second},
		{"sleep", 10 * time.Second, timeout, timeout + 4*time.Second}, // well before the grace ends
	} {
		t.Run(tc.helper, func(t *testing.T) {
			t.Parallel()
			// The deadline runs from here: res.Duration from the process's
			// start, a little later, so it can be just short of the
			// timeout: the minimum is checked from here.
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var out bytes.Buffer
			res, err := ExecRunner{Grace: tc.grace}.Run(ctx, Command{Argv: []string{os.Args[0]},
				Env: []string{"DEEPPROF_TEST_HELPER=" + tc.helper}, Stdout: &out})
			elapsed := time.Since(start)
			require.NoError(t, err)
			assert.True(t, res.Interrupted)
			assert.Equal(t, -1, res.ExitCode, "ended by a signal")
			assert.GreaterOrEqual(t, elapsed, tc.min)
			assert.Less(t, res.Duration, tc.max)
			if tc.helper == "hang" {
				var pid int
				_, err := fmt.Sscanf(out.String(), "pid=%d", &pid)
				require.NoError(t, err, "what it printed before the deadline is there: %q", out.String())
				assert.Error(t, syscall.Kill(pid, 0), "pid %d still runs", pid)
			}
		})
	}
}
