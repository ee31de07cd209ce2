package deepprof_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-perf-opt/deepprof"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolveWorkload(t *testing.T) {
	// Another script is run as given.
	p, emb, err := deepprof.ResolveWorkload("my.py", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "my.py", p)
	assert.False(t, emb)

	// From a directory without the script: the embedded copy, in the
	// cache. WorkloadPath names it and writes nothing (a dry run's).
	cache := t.TempDir()
	t.Chdir(t.TempDir())
	p, emb, err = deepprof.WorkloadPath(deepprof.WorkloadScript, filepath.Join(cache, "not-yet"))
	require.NoError(t, err)
	assert.True(t, emb)
	assert.Equal(t, "hf_causal_lm.py", filepath.Base(p))
	assert.NoDirExists(t, filepath.Join(cache, "not-yet"))
	p, emb, err = deepprof.ResolveWorkload(deepprof.WorkloadScript, cache)
	require.NoError(t, err)
	assert.True(t, emb)
	assert.True(t, filepath.IsAbs(p) || filepath.Dir(p) != ".")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, deepprof.WorkloadSource(), b)
	again, _, err := deepprof.ResolveWorkload(deepprof.WorkloadScript, cache)
	require.NoError(t, err)
	assert.Equal(t, p, again, "written once")

	// Where the file exists, it wins.
	require.NoError(t, os.MkdirAll(filepath.Dir(deepprof.WorkloadScript), 0o755))
	require.NoError(t, os.WriteFile(deepprof.WorkloadScript, []byte("# mine\n"), 0o644))
	p, emb, err = deepprof.ResolveWorkload(deepprof.WorkloadScript, cache)
	require.NoError(t, err)
	assert.Equal(t, deepprof.WorkloadScript, p)
	assert.False(t, emb)
}
