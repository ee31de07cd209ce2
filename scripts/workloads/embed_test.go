package workloads

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResolve(t *testing.T) {
	// Another script is run as given.
	p, emb, err := Resolve("my.py", t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, "my.py", p)
	assert.False(t, emb)

	// From a directory without the script: the embedded copy, in the cache.
	cache := t.TempDir()
	t.Chdir(t.TempDir())
	p, emb, err = Resolve(Script, cache)
	require.NoError(t, err)
	assert.True(t, emb)
	assert.True(t, filepath.IsAbs(p) || filepath.Dir(p) != ".")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, Source(), b)
	again, _, err := Resolve(Script, cache)
	require.NoError(t, err)
	assert.Equal(t, p, again, "written once")

	// Where the file exists, it wins.
	require.NoError(t, os.MkdirAll(filepath.Dir(Script), 0o755))
	require.NoError(t, os.WriteFile(Script, []byte("# mine\n"), 0o644))
	p, emb, err = Resolve(Script, cache)
	require.NoError(t, err)
	assert.Equal(t, Script, p)
	assert.False(t, emb)
}
