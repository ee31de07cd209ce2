package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadRecorded: every recorded run's summary.json reads strictly.
func TestReadRecorded(t *testing.T) {
	files, err := filepath.Glob("../../fixtures/runs/*/summary.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = Read(b, f)
		assert.NoError(t, err, f)
	}
}

// TestReadRefusesForged (issue 53): a summary.json no run could have made
// is refused with the file and the key, where encoding/json took it: an
// empty object, another format, shares of -500 % and 4,200 %, a second
// "kernels" key that empties the table, an MFU of 50, a negative total.
// SYNTHETIC edits of a recorded summary.
func TestReadRefusesForged(t *testing.T) {
	name := "../../fixtures/runs/cupti-tiny-llama/summary.json"
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	orig := string(b)
	_, err = Read(b, "s.json")
	require.NoError(t, err)
	edit := func(old, new string) []byte {
		require.Contains(t, orig, old)
		return []byte(strings.Replace(orig, old, new, 1))
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", []byte("{}"), `s.json: format "": want "deepprof-summary/1"`},
		{"format", edit(`"format": "deepprof-summary/1"`, `"format": "deepprof-summary/9"`), `s.json: format "deepprof-summary/9"`},
		{"share -500%", edit(`"share": 0.`, `"share": -5.`), "s.json: kernels.rows[0].share = -5."},
		{"share 4200%", edit(`"share": 0.`, `"share": 42.`), "s.json: kernels.rows[0].share = 42."},
		{"second kernels", edit(`"format": "deepprof-summary/1",`, `"format": "deepprof-summary/1", "kernels": {},`), `key "kernels" is given twice`},
		{"negative total", edit(`"total_ms": `, `"total_ms": -`), "want a time of at least 0"},
		{"mfu 50", edit(`"model": 0.000021052492127055698,`, `"model": 50,`), "s.json: mfu.model = 50: want a share from 0 to 1"},
		{"second mfu model", edit(`"mfu": {`, `"mfu": {"model": 0.5,`), `key "mfu.model" is given twice`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(c.in, "s.json")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
