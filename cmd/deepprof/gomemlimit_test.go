package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gomemlimits are values of GOMEMLIMIT and whether Go's runtime starts
// with them: the edges of its grammar (runtime.parseByteCount).
var gomemlimits = []struct {
	v  string
	ok bool
}{
	{"", true}, {"off", true}, {"0", true}, {"4GiB", true}, {"123", true}, {"123B", true},
	{"1KiB", true}, {"2MiB", true}, {"8388607TiB", true}, {"9223372036854775807", true},
	{"+5", true}, {"-0", true}, {"-0KiB", true}, {"007MiB", true},
	{"garbage", false}, {"OFF", false}, {"off ", false}, {" 1", false}, {"1 GiB", false},
	{"1GB", false}, {"1kiB", false}, {"1iB", false}, {"1PiB", false}, {"B", false}, {"iB", false},
	{"KiB", false}, {"-", false}, {"+", false}, {"-KiB", false}, {"-1", false}, {"-1B", false},
	{"1_000", false}, {"0x10", false}, {"9223372036854775808", false}, {"8388608TiB", false},
	{"99999999999999999999KiB", false}, {"1.5GiB", false}, {"\x1b]0;title\x07", false},
}

// TestGOMEMLIMITGrammar: deepprof's check takes what the runtime takes, no
// more and no less; the go command, a Go program without the check, says
// which values its runtime stops on.
func TestGOMEMLIMITGrammar(t *testing.T) {
	t.Parallel()
	gocmd, err := exec.LookPath("go")
	for _, c := range gomemlimits {
		assert.Equal(t, c.ok, validGOMEMLIMIT(c.v), "GOMEMLIMIT=%q", c.v)
		if err != nil {
			continue
		}
		cmd := exec.Command(gocmd, "env", "GOVERSION")
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOMEMLIMIT="+c.v)
		out, _ := cmd.CombinedOutput()
		stopped := strings.Contains(string(out), "malformed GOMEMLIMIT")
		assert.Equal(t, c.ok, !stopped, "the runtime on GOMEMLIMIT=%q: %s", c.v, firstLine(string(out)))
	}
	if err != nil {
		t.Log("no go command on PATH: the runtime's own verdicts not checked")
	}
}

// TestGOMEMLIMITMalformed (issue 53): a GOMEMLIMIT the runtime cannot
// parse ends deepprof with one line naming it and exit status 2, no stack
// trace; a valid one runs the command.
func TestGOMEMLIMITMalformed(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("deepprof")
	require.NoError(t, err)
	for _, c := range gomemlimits {
		cmd := exec.Command(bin, "version")
		cmd.Env = append(os.Environ(), "GOMEMLIMIT="+c.v)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if c.ok {
			assert.NoError(t, err, "GOMEMLIMIT=%q: %s", c.v, stderr.String())
			assert.True(t, strings.HasPrefix(stdout.String(), "deepprof "), "GOMEMLIMIT=%q: %q", c.v, stdout.String())
			continue
		}
		var ee *exec.ExitError
		if assert.True(t, errors.As(err, &ee), "GOMEMLIMIT=%q: %v", c.v, err) {
			assert.Equal(t, 2, ee.ExitCode(), "GOMEMLIMIT=%q", c.v)
		}
		assert.Empty(t, stdout.String())
		msg := stderr.String()
		assert.Regexp(t, `^deepprof: GOMEMLIMIT="[^"\n]*": not a memory limit: give a byte count with an optional B, KiB, MiB, GiB or TiB \(such as 4GiB\), or off\n$`, msg)
		assert.NotContains(t, msg, "\x1b")
		assert.NotContains(t, msg, "goroutine")
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=garbage")
	out, _ := cmd.CombinedOutput()
	assert.Equal(t, `deepprof: GOMEMLIMIT="garbage": not a memory limit: give a byte count with an optional B, KiB, MiB, GiB or TiB (such as 4GiB), or off`+"\n", string(out))
	cmd = exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GOMEMLIMIT=\x1b]0;title\x07"+strings.Repeat("9", 100))
	out, _ = cmd.CombinedOutput()
	assert.Contains(t, string(out), `GOMEMLIMIT="\x1b]0;title\x07`+strings.Repeat("9", 54)+`...": `)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
