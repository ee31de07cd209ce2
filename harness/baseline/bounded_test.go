package baseline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/harness/baseline"
	"github.com/llm-perf-opt/deepprof/internal/bounded/boundedtest"
)

// TestReadBounded (issue 16): a baseline is read up to a cap; an endless
// input (SYNTHETIC zeros) is an error naming it.
func TestReadBounded(t *testing.T) {
	boundedtest.Limit(t, 1<<20)
	_, err := baseline.Read(boundedtest.Over(), "/dev/zero")
	require.EqualError(t, err, "/dev/zero: larger than 1 MiB: not a deepprof file?")
}
