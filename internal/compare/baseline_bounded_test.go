package compare_test

import (
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/input"

	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/compare"
)

// TestReadBounded (issue 16): a baseline is read up to a cap; an endless
// input (SYNTHETIC zeros) is an error naming it.
func TestReadBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	_, err := compare.Read(input.OverLimit(), "/dev/zero")
	require.EqualError(t, err, "/dev/zero: larger than 1 MiB: not a deepprof file?")
}
