package config_test

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeps: config sits low in the module. Composing a profile must not
// pull in the renderers, the summary, NVML or the comparison code, whose
// tolerances it holds (package tolerance holds them instead). The walk reads
// the import lines of the module's own packages (build.ImportDir, no go
// tool), test files left out; it is what `go list -deps ./harness/config`
// lists of this module.
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
		p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
		require.NoError(t, err, pkg)
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				walk(rel)
			}
		}
	}
	walk("harness/config")
	assert.True(t, seen["harness/tolerance"], "the walk follows config's imports")
	for _, banned := range []string{"harness/report", "harness/summary", "harness/gpu", "harness/diff", "harness/baseline"} {
		assert.False(t, seen[banned], "harness/config depends on %s", banned)
	}
}
