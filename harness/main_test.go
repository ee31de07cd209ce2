package harness_test

import (
	"os"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/synth"
)

func TestMain(m *testing.M) {
	synth.CollectLess()
	os.Exit(m.Run())
}
