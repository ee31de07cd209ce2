package timeline_test

import (
	gobuild "go/build"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeps: the timeline reads records and computes; which kernel is
// communication is its caller's rule (PhaseOptions.Communication), so it
// does not import classify, nor the summary or renderers above it. The walk
// reads the import lines of the module's own packages, test files left out.
func TestDeps(t *testing.T) {
	const module = "github.com/llm-perf-opt/deepprof/"
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	var walk func(pkg string)
	walk = func(pkg string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		p, err := gobuild.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		require.NoError(t, err, pkg)
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				walk(rel)
			}
		}
	}
	walk("harness/timeline")
	assert.True(t, seen["harness/cupti"], "the walk follows timeline's imports")
	for _, banned := range []string{"harness/classify", "harness/summary", "harness/report"} {
		assert.False(t, seen[banned], "harness/timeline depends on %s", banned)
	}
}
