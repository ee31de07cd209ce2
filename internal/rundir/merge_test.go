package rundir

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// node makes a run directory holding the given files (relative path ->
// content).
func node(t *testing.T, root, id string, files map[string]string) string {
	t.Helper()
	run, err := Create(root, id, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	for rel, text := range files {
		p := run.Path(rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	require.NoError(t, run.WriteManifest(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)))
	return run.Dir
}

func TestMakeTakesEveryRank(t *testing.T) {
	root := t.TempDir()
	a := node(t, root, "a", map[string]string{ConfigYAML: "a", Stage1Report: "{}", "timeline/cupti/cupti-10.tsv": "x", RankPath("0", NcuRaw): "r0", RankPath("1", NcuRaw): "r1"})
	b := node(t, root, "b", map[string]string{ConfigYAML: "b", "timeline/cupti/cupti-20.tsv": "y", RankPath("2", NcuRaw): "r2", RankPath("3", NcuRaw) + ".gz": "r3", "ncu/ranks/rank3/.raw.csv.tmp-123": "half"})
	p, err := Make([]string{a, b}, nil)
	require.NoError(t, err)
	var rels []string
	for _, c := range p.Files {
		rels = append(rels, c.Rel)
	}
	assert.Equal(t, []string{"config.yaml", "ncu/ranks/rank0/raw.csv", "ncu/ranks/rank1/raw.csv", "ncu/ranks/rank2/raw.csv",
		"ncu/ranks/rank3/raw.csv.gz", "stage1/report.json", "timeline/cupti/cupti-10.tsv", "timeline/cupti/cupti-20.tsv"}, rels)
	assert.Equal(t, []string{"rank0", "rank1", "rank2", "rank3"}, p.Ranks())
	assert.Equal(t, filepath.Join(a, "config.yaml"), p.Files[0].From, "the first node's configuration")

	out, err := Create(root, "merged", time.Now())
	require.NoError(t, err)
	require.NoError(t, p.Write(out))
	b3, err := os.ReadFile(out.Path("ncu/ranks/rank3/raw.csv.gz"))
	require.NoError(t, err)
	assert.Equal(t, "r3", string(b3))
}

func TestMakeRefusesARankTwice(t *testing.T) {
	root := t.TempDir()
	a := node(t, root, "a", map[string]string{RankPath("0", NcuRaw): "r0"})
	b := node(t, root, "b", map[string]string{RankPath("0", NcuRaw): "again"})
	_, err := Make([]string{a, b}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ncu/ranks/rank0/raw.csv is in two run directories")
}

func TestMakeRefusesWhatIsNotARun(t *testing.T) {
	_, err := Make([]string{t.TempDir()}, nil)
	var nr *NotRunDirError
	assert.ErrorAs(t, err, &nr)
	_, err = Make(nil, nil)
	assert.Error(t, err)
}

// TestMakeKeepsPartial: a partial input makes the merged run partial, a
// file's status in its input's manifest stays, and a rank's export given
// plain by one node and gzipped by another is one file twice.
func TestMakeKeepsPartial(t *testing.T) {
	root := t.TempDir()
	a := node(t, root, "a", map[string]string{RankPath("0", NcuRaw): "r0"})
	ra, err := Open(a)
	require.NoError(t, err)
	ra.Record(RankPath("0", NcuRaw), StatusPartial, "exported from the partial report of a failed deep pass")
	ra.MarkPartial("interrupted during ncu-deep")
	require.NoError(t, ra.WriteManifest(time.Now()))
	b := node(t, root, "b", map[string]string{RankPath("1", NcuRaw): "r1"})

	p, err := Make([]string{a, b}, nil)
	require.NoError(t, err)
	require.Len(t, p.Partial, 1)
	assert.Contains(t, p.Partial[0], "interrupted during ncu-deep")
	out, err := Create(root, "merged", time.Now())
	require.NoError(t, err)
	require.NoError(t, p.Write(out))
	m := out.Manifest()
	assert.Equal(t, StatusPartial, m.Status)
	f, ok := m.Find(RankPath("0", NcuRaw))
	require.True(t, ok)
	assert.Equal(t, StatusPartial, f.Status)

	c := node(t, root, "c", map[string]string{RankPath("1", NcuRaw) + ".gz": "r1 again"})
	_, err = Make([]string{b, c}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ncu/ranks/rank1/raw.csv is in two run directories")
}

// TestMakeRenamesOneIDOnTwoMachines: the same record file name from two
// nodes whose files name different machines (machine reads a file's
// content here) is kept twice, the later renamed, whichever of the two is
// gzipped; the same machine twice is refused.
func TestMakeRenamesOneIDOnTwoMachines(t *testing.T) {
	root := t.TempDir()
	machine := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return string(b), err
	}
	a := node(t, root, "a", map[string]string{"timeline/cupti/cupti-7.tsv.gz": "host-a"})
	b := node(t, root, "b", map[string]string{"timeline/cupti/cupti-7.tsv": "host-b"})
	p, err := Make([]string{a, b}, machine)
	require.NoError(t, err)
	var rels []string
	for _, c := range p.Files {
		rels = append(rels, c.Rel)
	}
	assert.Equal(t, []string{"timeline/cupti/cupti-7-2.tsv", "timeline/cupti/cupti-7.tsv.gz"}, rels)
	assert.Contains(t, p.Notes[0], "timeline/cupti/cupti-7.tsv of "+b+" is timeline/cupti/cupti-7-2.tsv: its process id also ran on host-a")

	c := node(t, root, "c", map[string]string{"timeline/cupti/cupti-7.tsv": "host-a"})
	_, err = Make([]string{a, c}, machine)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "timeline/cupti/cupti-7.tsv is in two run directories")
}
