package workload

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunsRoundTrip(t *testing.T) {
	in := Runs{Runs: []Run{{WallMS: 1234.5}, {WallMS: 987.25}}}
	b, err := in.JSON()
	require.NoError(t, err)
	out, err := ReadRuns(strings.NewReader(string(b)), "stage1/runs.json")
	require.NoError(t, err)
	assert.Equal(t, in, *out)
}

// Malformed files (synthetic): positioned errors, never a number.
func TestReadRunsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "stage1/runs.json:1: empty report"},
		{`{"runs": [{"wall_ms": 1}`, "stage1/runs.json:1"},
		{`{"runs": []}`, "stage1/runs.json: runs is empty"},
		{`{"runs": [{"wall_ms": -4}]}`, "stage1/runs.json: runs[0].wall_ms = -4: want a finite duration of at least 0"},
		{`{"runs": [{"wall_ms": 1, "exit": 0}]}`, `unknown field "exit"`},
		{"{\"runs\": [\n{\"wall_ms\": \"7\"}]}", "stage1/runs.json:2"},
	} {
		_, err := ReadRuns(strings.NewReader(c.in), "stage1/runs.json")
		require.Error(t, err, c.in)
		assert.Contains(t, err.Error(), c.want, c.in)
	}
}
