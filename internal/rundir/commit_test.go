package rundir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommit: each kind of output is written (or not) and recorded as it
// says; a write that fails is recorded missing, named in failed and
// returned; a missing output fails the rebuild only when it says so. What
// deepprof wrote earlier and does not write now is removed, and only that:
// a file of the user's in a folder deepprof writes stays, and so does the
// folder.
func TestCommit(t *testing.T) {
	t.Parallel()
	r, err := Create(filepath.Join(t.TempDir(), "tmp", "stage2"), "run1", t0)
	require.NoError(t, err)
	for _, rel := range []string{"old.md", "skipped.svg", "gone.json", "charts/x.svg", "regions/old/kernels.md", "regions/report.md"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(r.Path(rel)), 0o755))
		require.NoError(t, r.Write(rel, []byte("earlier")))
	}
	users := []string{"charts/mine.svg", "regions/NOTES.md", "regions/kept/my_comment.txt"}
	for _, rel := range users {
		require.NoError(t, os.MkdirAll(filepath.Dir(r.Path(rel)), 0o755))
		require.NoError(t, os.WriteFile(r.Path(rel), []byte("the user's"), 0o644))
	}
	noInput, written := errors.New("no input"), errors.New("the trace's write failed")
	failed := map[string]error{}
	errs := r.Commit([]Output{
		{Rel: "data.md", Data: []byte("data\n")},
		{Rel: "partial.md", Data: []byte("p\n"), Status: StatusPartial, Reason: "in part"},
		{Rel: "stream.json", Stream: func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }},
		{Rel: "trace.json.gz", Written: func() error { return written }},
		{Rel: "regions", IsDir: true, Records: []string{"regions/report.md"}, Dir: []File{{Rel: "report.md", Data: []byte("r\n")}, {Rel: "new/kernels.md", Data: []byte("k\n")}}},
		{Rel: "old.md", Missing: noInput, RemoveNow: true},
		{Rel: "missing.md", Missing: noInput, Fails: true},
		{Rel: "skipped.svg", Skipped: "no data"},
		{Rel: "gone.json", Forget: true},
		{Rel: "charts", IsDir: true, Records: []string{"charts/x.svg"}, Missing: noInput},
	}, failed)
	assert.Equal(t, []error{written, noInput}, errs)
	assert.Equal(t, map[string]error{"trace.json.gz": written}, failed)

	read := func(rel string) string {
		b, err := os.ReadFile(r.Path(rel))
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return string(b)
	}
	assert.Equal(t, "data\n", read("data.md"))
	assert.Equal(t, "{}\n", read("stream.json"))
	assert.Equal(t, "r\n", read("regions/report.md"))
	assert.Equal(t, "k\n", read("regions/new/kernels.md"))
	for _, rel := range []string{"old.md", "skipped.svg", "gone.json", "charts/x.svg", "regions/old/kernels.md"} {
		assert.NoFileExists(t, r.Path(rel), "%s removed", rel)
	}
	assert.NoDirExists(t, r.Path("regions/old"), "the folder of an earlier build's table, left empty, removed")
	for _, rel := range users {
		assert.Equal(t, "the user's", read(rel), "%s: the user's file stays", rel)
	}
	m := r.Manifest()
	status := func(rel string) (Status, string) {
		a, ok := m.Find(rel)
		if !ok {
			return "", "(not listed)"
		}
		return a.Status, a.Reason
	}
	for rel, want := range map[string][2]string{
		"data.md":                {string(StatusComplete), ""},
		"partial.md":             {string(StatusPartial), "in part"},
		"stream.json":            {string(StatusComplete), ""},
		"trace.json.gz":          {string(StatusMissing), written.Error()},
		"regions/report.md":      {string(StatusComplete), ""},
		"regions/new/kernels.md": {string(StatusComplete), ""},
		"regions/old/kernels.md": {"", "(not listed)"},
		"old.md":                 {string(StatusMissing), noInput.Error()},
		"missing.md":             {string(StatusMissing), noInput.Error()},
		"skipped.svg":            {string(StatusSkipped), "no data"},
		"charts/x.svg":           {string(StatusMissing), noInput.Error()},
	} {
		st, why := status(rel)
		assert.Equal(t, want, [2]string{string(st), why}, rel)
	}
	_, listed := m.Find("gone.json")
	assert.False(t, listed, "a forgotten output leaves the manifest")
}
