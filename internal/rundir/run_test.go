package rundir

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/input"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)

func TestNewRunID(t *testing.T) {
	id, err := NewRunID(t0, bytes.NewReader([]byte{0x3f, 0x9a, 0x1c}))
	require.NoError(t, err)
	assert.Equal(t, "20261121T223000Z-3f9a1c", id)
	_, err = NewRunID(t0, bytes.NewReader(nil))
	assert.Error(t, err)
}

func TestCreateNeverReuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tmp", "stage2")
	r, err := Create(root, "run1", t0)
	require.NoError(t, err)
	assert.DirExists(t, r.Dir)
	mark, err := os.ReadFile(r.Path(RunMark))
	require.NoError(t, err)
	assert.Equal(t, `{"format":"deepprof-run/1","run_id":"run1"}`+"\n", string(mark), "the run is marked at creation")
	m, err := ReadMark(r.Dir)
	require.NoError(t, err)
	assert.Equal(t, Mark{Format: MarkFormat, RunID: "run1"}, m)
	_, err = Create(root, "run1", t0)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRunExists))
	assert.Contains(t, err.Error(), "choose another run.id")
	for _, bad := range []string{"../x", "a/b", "/abs", ".."} {
		_, err := Create(root, bad, t0)
		assert.Error(t, err, bad)
	}
	r2, err := Create(root, "", t0)
	require.NoError(t, err)
	assert.Regexp(t, `^20261121T223000Z-[0-9a-f]{6}$`, r2.ID)
}

func TestWriteAtomicAndManifest(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(KernelsMD, []byte("# Kernels\n")))
	require.NoError(t, r.Write("ncu/raw.csv", []byte("x")))
	r.Record(NcuDetails, StatusSkipped, "no details page asked for")
	r.Record("ncu/raw.csv", StatusPartial, "the workload crashed after 10 launches")
	r.MarkPartial("the workload crashed")
	r.MarkPartial("a second reason is not kept")
	r.Note("timeline: ncu timing pass (no usable nsys)")
	require.NoError(t, r.WriteManifest(t0.Add(time.Minute)))

	entries, err := os.ReadDir(filepath.Join(r.Dir, "ncu"))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")

	var m Manifest
	b, err := os.ReadFile(r.Path(ManifestJSON))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, StatusPartial, m.Status)
	assert.Equal(t, "the workload crashed", m.Reason)
	assert.Equal(t, "2026-11-21T22:31:00Z", m.Finished)
	assert.Equal(t, []Artifact{
		{Path: RunMark, Kind: Provenance, Status: StatusComplete, Bytes: int64(len(markText("run")))},
		{Path: "kernels.md", Kind: Derived, Status: StatusComplete, Bytes: 10},
		{Path: "ncu/details.csv", Kind: Raw, Status: StatusSkipped, Reason: "no details page asked for"},
		{Path: "ncu/raw.csv", Kind: Raw, Status: StatusPartial, Reason: "the workload crashed after 10 launches", Bytes: 1},
	}, m.Artifacts)

	again, err := Open(r.Dir)
	require.NoError(t, err)
	assert.Equal(t, m, again.Manifest())
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b.txt")
	require.NoError(t, WriteFileAtomic(p, []byte("one")))
	require.NoError(t, WriteFileAtomic(p, []byte("two")))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, "two", string(b))
	require.Error(t, WriteFileAtomic(filepath.Join(p, "under-a-file"), nil), "a file is not a directory")
}

// TestRebuiltManifestKeepsSessionTimes: deepprof report stamps rebuilt and
// leaves the session's started and finished alone.
func TestRebuiltManifestKeepsSessionTimes(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.WriteManifest(t0.Add(time.Minute)))
	again, err := Open(r.Dir)
	require.NoError(t, err)
	require.NoError(t, again.WriteRebuiltManifest(t0.Add(time.Hour)))
	m := again.Manifest()
	assert.Equal(t, "2026-11-21T22:30:00Z", m.Started)
	assert.Equal(t, "2026-11-21T22:31:00Z", m.Finished)
	assert.Equal(t, "2026-11-21T23:30:00Z", m.Rebuilt)

	// A session stopped before it wrote its manifest: its mark, config.yaml
	// and a raw export.
	dir := t.TempDir()
	require.NoError(t, WriteMark(dir, "stopped"))
	require.NoError(t, WriteFileAtomic(filepath.Join(dir, ConfigYAML), []byte("run: {}\n")))
	require.NoError(t, WriteFileAtomic(filepath.Join(dir, NcuTimingRaw+".gz"), []byte("x")))
	bare, err := Open(dir)
	require.NoError(t, err)
	assert.Equal(t, "stopped", bare.Manifest().RunID, "the mark's run id")
	require.NoError(t, bare.WriteRebuiltManifest(t0))
	assert.Equal(t, "2026-11-21T22:30:00Z", bare.Manifest().Finished)
}

// TestOpenRefusesNonRunDirectories: deepprof report must not write into a
// directory that is not a run directory; Open says what is missing. A run
// is what deepprof made: a folder without its mark is not one, whatever
// it holds (issue 53: a manifest.json with a run id, config.yaml beside a
// tool output, a derived file), and nothing in it is read.
func TestOpenRefusesNonRunDirectories(t *testing.T) {
	const noMark = "not a run directory: no .deepprof-run, the mark deepprof profile writes into every run directory it makes (deepprof writes and removes files only in those)"
	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	onlyConfig := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(onlyConfig, ConfigYAML), []byte("a: 1\n"), 0o644))
	configAndExport := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(configAndExport, ConfigYAML), []byte("a: 1\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(configAndExport, "ncu"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(configAndExport, NcuRaw), []byte("x"), 0o644))
	notOurs := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notOurs, ManifestJSON), []byte(`{"name": "a web app"}`), 0o644))
	forged := t.TempDir() // a manifest with a run id, and a user's files
	require.NoError(t, os.WriteFile(filepath.Join(forged, ManifestJSON), []byte(`{"run_id": "x", "status": "complete", "artifacts": []}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(forged, KernelsMD), []byte("my kernels"), 0o644))
	otherMark := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(otherMark, RunMark), []byte(`{"format": "deepprof-run/2", "run_id": "x"}`), 0o644))
	noID := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noID, RunMark), []byte(`{"format": "deepprof-run/1"}`), 0o644))
	notJSON := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notJSON, RunMark), []byte("yes"), 0o644))
	markDir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(markDir, RunMark), 0o755))
	markLinkOut := t.TempDir()
	outside := filepath.Join(t.TempDir(), "mark")
	require.NoError(t, WriteMark(filepath.Dir(outside), "elsewhere"))
	require.NoError(t, os.Symlink(filepath.Join(filepath.Dir(outside), RunMark), filepath.Join(markLinkOut, RunMark)))
	const badMark = "not a run directory: .deepprof-run is not a mark this deepprof writes (deepprof-run/1 with a run id)"
	for dir, want := range map[string]string{
		t.TempDir():                        noMark,
		onlyConfig:                         noMark,
		configAndExport:                    noMark,
		notOurs:                            noMark,
		forged:                             noMark,
		otherMark:                          badMark,
		noID:                               badMark,
		notJSON:                            badMark,
		markDir:                            "not a run directory: .deepprof-run is not a plain file of the folder: ",
		markLinkOut:                        "not a run directory: .deepprof-run is not a plain file of the folder: ",
		file:                               "not a run directory: a file, not a directory",
		filepath.Join(t.TempDir(), "nope"): "not a run directory: no such directory",
	} {
		before := treeOf(t, dir)
		_, err := Open(dir)
		var nr *NotRunDirError
		require.ErrorAs(t, err, &nr, dir)
		assert.ErrorIs(t, err, ErrNotRun)
		assert.Equal(t, dir+": "+want, err.Error()[:min(len(err.Error()), len(dir)+2+len(want))])
		assert.NotContains(t, err.Error(), "\n")
		assert.Equal(t, before, treeOf(t, dir), "nothing written into %s", dir)
	}
}

// treeOf is every path under dir with its content (a folder's is "/"),
// nil where dir is not there.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			out[p] = "/"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = string(b)
		return nil
	})
	return out
}

// TestCheckPresence: a rebuild lists what is not in MAIN as absent (with
// the status it had), what is kept gzipped under its stored name, and gives
// an absent file that is back its status again.
func TestCheckPresence(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(NcuRaw, []byte("raw")))
	r.Record(NcuDeepReport, StatusPartial, "ncu reported problems: see the notes")
	r.Record(NcuTimingReport, StatusComplete, "")
	r.Record(NcuDetails, StatusSkipped, "not asked for")
	require.NoError(t, os.Rename(r.Path(NcuRaw), r.Path(NcuRaw+".gz")))

	r.CheckPresence()
	byPath := map[string]Artifact{}
	for _, a := range r.Manifest().Artifacts {
		byPath[a.Path] = a
	}
	assert.Equal(t, Artifact{Path: NcuRaw, Kind: Raw, Status: StatusComplete, Bytes: 3, StoredAs: NcuRaw + ".gz"}, byPath[NcuRaw])
	assert.Equal(t, NcuRaw+".gz", byPath[NcuRaw].File())
	assert.Equal(t, Artifact{Path: NcuDeepReport, Kind: Raw, Status: StatusAbsent, Was: StatusPartial,
		Reason: "not kept in this copy of the run directory; when made: ncu reported problems: see the notes"}, byPath[NcuDeepReport])
	assert.Equal(t, Artifact{Path: NcuTimingReport, Kind: Raw, Status: StatusAbsent, Was: StatusComplete,
		Reason: "not kept in this copy of the run directory"}, byPath[NcuTimingReport])
	assert.Equal(t, StatusSkipped, byPath[NcuDetails].Status, "never made: not absent")
	assert.False(t, byPath[NcuDeepReport].Present())

	require.NoError(t, WriteFileAtomic(r.Path(NcuDeepReport), []byte("rep")))
	r.CheckPresence()
	for _, a := range r.Manifest().Artifacts {
		if a.Path == NcuDeepReport {
			assert.Equal(t, Artifact{Path: NcuDeepReport, Kind: Raw, Status: StatusPartial, Reason: "ncu reported problems: see the notes"}, a)
		}
	}
}

func TestLayout(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Layout() {
		assert.False(t, seen[s.Path], "%s listed twice", s.Path)
		seen[s.Path] = true
		assert.NotEmpty(t, s.Kind, s.Path)
	}
	assert.Equal(t, "nsys/run_cuda_gpu_kern_sum.csv", NsysKernSum)
	assert.Equal(t, []string{TimelineTrace, TimelinePhases, OracleCheckJSON, KernelsMD, KernelsJSON, RegionsDir, RegionsSampleDir, StakeholderSummary, SummaryJSON,
		OperatorsMD, ChartsDir, ReportMD, ReportHTML}, DerivedRoots())
}

// TestSweepStaging: a writer killed before Commit leaves its temporary
// file in the folder's StagingDir only; the next sweep removes it and the
// folder. A file of the user's named like a temporary file (anywhere,
// StagingDir excepted) is never touched, nor a StagingDir without
// deepprof's marker.
func TestSweepStaging(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := CreateAtomicIn(dir, filepath.Join(dir, "ncu", "regions", "report.json"))
	require.NoError(t, err)
	_, err = a.Write([]byte("{half"))
	require.NoError(t, err)
	require.NoError(t, a.f.Close()) // a killed writer: neither Commit nor Abort
	a.root.Close()
	assert.True(t, strings.HasPrefix(a.tmp, StagingDir+string(filepath.Separator)), a.tmp)
	for _, p := range []string{".config.yaml.tmp-1", "ncu/.report.json.tmp-123", "Docs/.drafts.tmp-2024/notes.txt"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte("mine"), 0o644))
	}

	removed, err := SweepStaging(dir)
	require.NoError(t, err)
	require.Len(t, removed, 1)
	assert.Regexp(t, `^report\.json\.[0-9a-f]{16}$`, removed[0])
	assert.NoDirExists(t, filepath.Join(dir, StagingDir))
	for _, p := range []string{".config.yaml.tmp-1", "ncu/.report.json.tmp-123", "Docs/.drafts.tmp-2024/notes.txt"} {
		assert.FileExists(t, filepath.Join(dir, p), "the user's file, named like a temporary one")
	}

	// A folder of the user's named like StagingDir: neither emptied nor
	// written into.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, StagingDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, StagingDir, "mine.txt"), []byte("x"), 0o644))
	removed, err = SweepStaging(dir)
	require.NoError(t, err)
	assert.Empty(t, removed)
	assert.FileExists(t, filepath.Join(dir, StagingDir, "mine.txt"))
	err = WriteFileAtomicIn(dir, filepath.Join(dir, "kernels.json"), []byte("{}"))
	require.ErrorContains(t, err, "a folder deepprof did not make")

	// One a writer killed while making it left (empty, or its marker cut
	// short) is deepprof's: taken up, and swept.
	for _, marker := range []string{"", "deepprof's temp"} {
		other := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(other, StagingDir), 0o755))
		if marker != "" {
			require.NoError(t, os.WriteFile(filepath.Join(other, StagingDir, stagingMarker), []byte(marker), 0o644))
		}
		require.NoError(t, WriteFileAtomicIn(other, filepath.Join(other, "kernels.json"), []byte("{}")))
		_, err = SweepStaging(other)
		require.NoError(t, err)
		assert.NoDirExists(t, filepath.Join(other, StagingDir))
	}
}

// TestRemoveStale: a derived file recorded missing is removed, and its
// entry no longer gives the removed file's size; a rebuild's partial mark
// is cleared by ClearRebuild, a session's is not.
func TestRemoveStale(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(KernelsJSON, []byte("{}\n")))
	r.Record(KernelsJSON, StatusMissing, "its source fails")
	a, _ := r.Manifest().Find(KernelsJSON)
	require.EqualValues(t, 3, a.Bytes)
	removed, err := r.RemoveStale()
	require.NoError(t, err)
	assert.Equal(t, []string{KernelsJSON}, removed)
	assert.NoFileExists(t, r.Path(KernelsJSON))
	a, _ = r.Manifest().Find(KernelsJSON)
	assert.Zero(t, a.Bytes, "no size for a file that is not there")

	r.MarkRebuildPartial("derived files not made")
	assert.Equal(t, PartialByRebuild, r.Manifest().PartialBy)
	why, ok := r.Manifest().RebuildMarked()
	assert.True(t, ok)
	assert.Equal(t, "derived files not made", why)
	r.ClearRebuild()
	assert.Equal(t, StatusComplete, r.Manifest().Status)
	assert.Empty(t, r.Manifest().PartialBy)
	r.MarkPartial("interrupted")
	r.ClearRebuild()
	assert.Equal(t, StatusPartial, r.Manifest().Status, "a session's own reason stays")

	// A session's reason that reads like a rebuild's (a program's own
	// message) is still the session's: state is typed, not read from words.
	s, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	s.MarkPartial(RebuildPartial + "a line the program printed")
	s.ClearRebuild()
	assert.Equal(t, StatusPartial, s.Manifest().Status)
	_, ok = s.Manifest().RebuildMarked()
	assert.False(t, ok)
}

// TestOpenBounded (issue 16): manifest.json is read up to a cap; an
// endless one (SYNTHETIC zeros through a named pipe) is an error naming it.
func TestOpenBounded(t *testing.T) {
	input.LimitForTest(t, 1<<20)
	dir := t.TempDir()
	require.NoError(t, WriteMark(dir, "run"))
	p := filepath.Join(dir, ManifestJSON)
	input.FIFOForTest(t, p)
	_, err := Open(dir)
	require.EqualError(t, err, p+": not a regular file (a named pipe): deepprof reads only plain files", "a pipe is refused at once")

	// A plain manifest over the cap is refused before it is read.
	other := t.TempDir()
	require.NoError(t, WriteMark(other, "run"))
	require.NoError(t, os.WriteFile(filepath.Join(other, ManifestJSON), make([]byte, 1<<20+1), 0o644))
	_, err = Open(other)
	require.EqualError(t, err, filepath.Join(other, ManifestJSON)+": larger than 1 MiB: not a deepprof file?")
}

// TestWriteRebuildStarted: while a rebuild is under way, manifest.json
// says so (the run partial, RebuildStarted) and claims no derived file's
// size; the run in memory is unchanged, and the next rebuild clears it.
func TestWriteRebuildStarted(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	require.NoError(t, r.Write(KernelsJSON, []byte("{}\n")))
	require.NoError(t, r.WriteRebuildStarted())
	assert.Equal(t, StatusComplete, r.Manifest().Status, "the run in memory")
	a, _ := r.Manifest().Find(KernelsJSON)
	assert.EqualValues(t, 3, a.Bytes)

	on, err := Open(r.Dir)
	require.NoError(t, err)
	m := on.Manifest()
	assert.Equal(t, StatusPartial, m.Status)
	assert.Equal(t, RebuildPartial+RebuildStarted, m.Reason)
	a, _ = m.Find(KernelsJSON)
	assert.Zero(t, a.Bytes, "no size claimed while the file may be replaced")
	on.ClearRebuild()
	assert.Equal(t, StatusComplete, on.Manifest().Status, "the next rebuild clears the mark")
}

// TestParse: Parse reads a file kept gzipped as its plain content, naming
// the file as the run names it; ParsePlain reads only the plain file; both
// give the reader's error and a missing file's.
func TestParse(t *testing.T) {
	r, err := Create(t.TempDir(), "run", t0)
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, err = zw.Write([]byte("a,b\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(r.Path(NcuRaw)), 0o755))
	require.NoError(t, os.WriteFile(r.Path(NcuRaw+".gz"), zb.Bytes(), 0o644))
	read := func(rd io.Reader, name string) (string, error) {
		b, err := io.ReadAll(rd)
		return name + ": " + string(b), err
	}
	got, err := Parse(r, NcuRaw, read)
	require.NoError(t, err)
	assert.Equal(t, NcuRaw+": a,b\n", got)
	_, err = ParsePlain(r, NcuRaw, read)
	require.ErrorIs(t, err, fs.ErrNotExist, "ParsePlain does not open the gzipped copy")

	require.NoError(t, os.WriteFile(r.Path(EnvJSON), []byte("{}"), 0o644))
	got, err = ParsePlain(r, EnvJSON, read)
	require.NoError(t, err)
	assert.Equal(t, EnvJSON+": {}", got)
	_, err = Parse(r, EnvJSON, func(io.Reader, string) (int, error) { return 0, errors.New("the reader's") })
	require.EqualError(t, err, "the reader's")
	_, err = Parse(r, Stage1Report, read)
	require.ErrorIs(t, err, fs.ErrNotExist)
}
