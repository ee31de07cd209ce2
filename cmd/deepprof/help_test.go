package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpPerCommand (issue 38): help CMD prints what CMD --help prints,
// for every command; an unknown one is a usage error with the closest
// name; version --help says what version does.
func TestHelpPerCommand(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		want, _, err := runCmd([]string{c.name, "--help"}, "")
		require.NoError(t, err, c.name)
		got, _, err := runCmd([]string{"help", c.name}, "")
		require.NoError(t, err, c.name)
		assert.Equal(t, want, got, c.name)
		assert.Contains(t, got, "Usage: deepprof "+c.name, c.name)
	}
	top, _, err := runCmd([]string{"help"}, "")
	require.NoError(t, err)
	again, _, err := runCmd([]string{"help", "help"}, "")
	require.NoError(t, err)
	assert.Equal(t, top, again)

	_, _, err = runCmd([]string{"help", "nosuch"}, "")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	_, _, err = runCmd([]string{"help", "kernls"}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "kernels"?`)

	out, _, err := runCmd([]string{"version", "--help"}, "")
	require.NoError(t, err)
	assert.Contains(t, out, "Usage: deepprof version")
	assert.NotContains(t, out, "go1.", "the help, not the version")
}

// TestUsageWords: a mistyped format gets the closest one; one argument is
// "1 argument".
func TestUsageWords(t *testing.T) {
	t.Parallel()
	_, _, err := runCmd([]string{"kernels", "--format", "jsn", "x"}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `(did you mean "json"?)`)
	assert.Equal(t, 2, exitCode(err))
	_, _, err = runCmd([]string{"diff", "a"}, "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "got 1 argument")
	assert.NotContains(t, err.Error(), "1 arguments")
}

// TestHelpWithoutFlags: a command with no flags gets no empty "Flags:"
// heading; one with flags gets it.
func TestHelpWithoutFlags(t *testing.T) {
	t.Parallel()
	out, _, err := runCmd([]string{"completion", "--help"}, "")
	require.NoError(t, err)
	assert.NotContains(t, out, "Flags:")
	out, _, err = runCmd([]string{"kernels", "--help"}, "")
	require.NoError(t, err)
	assert.Contains(t, out, "\nFlags:\n  --format format\n")
}
