// SYNTHETIC folders that deepprof did not make, for the tests that it never
// takes one for a run (issue 53), and the user's files dropped into a run.

package synth

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// UserFiles are files of a person's (paths in slash form, and their
// content), named as deepprof names what it writes in a run: what a folder
// that is not a run holds (NotARun), or what a person keeps beside a run's
// files.
var UserFiles = map[string]string{
	"my_notes.txt":             "SYNTHETIC: a person's notes, not deepprof's\n",
	rundir.KernelsMD:           "# my own kernel notes (SYNTHETIC)\n",
	rundir.ReportMD:            "# my report (SYNTHETIC)\n",
	rundir.ChartTopKernels:     "<svg><!-- my drawing (SYNTHETIC) --></svg>\n",
	rundir.RegionsMD:           "my region notes (SYNTHETIC)\n",
	"ncu/regions/NOTES.md":     "notes on the regions (SYNTHETIC)\n",
	"ncu/regions/prefill/x.md": "a file of mine in a region's folder (SYNTHETIC)\n",
}

// NotARun makes a folder under t.TempDir() that deepprof did not make and
// that holds what its commands once took for a run (issue 53): a
// manifest.json with a run id (and keys of its own), the user's files
// (UserFiles), and copies of the recorded run from's kernels.json,
// summary.json, stage1/report.json and config.yaml, as a person might keep
// them. It has no RunMark. It returns the folder's path.
func NotARun(t testing.TB, from string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "not-a-run")
	write := func(rel string, b []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest, err := json.MarshalIndent(map[string]any{
		"run_id": "my-project", "status": "complete", "owner": "a person", "deploy": map[string]any{"stage": "prod"},
		"artifacts": []map[string]any{
			{"path": rundir.KernelsMD, "kind": "derived", "status": "complete"},
			{"path": rundir.ReportMD, "kind": "derived", "status": "complete"},
			{"path": rundir.ChartTopKernels, "kind": "derived", "status": "complete"},
			{"path": rundir.RegionsMD, "kind": "derived", "status": "complete"},
		},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	write(rundir.ManifestJSON, manifest)
	for rel, content := range UserFiles {
		write(rel, []byte(content))
	}
	for _, rel := range []string{rundir.KernelsJSON, rundir.SummaryJSON, rundir.Stage1Report, rundir.ConfigYAML} {
		b, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		write(rel, b)
	}
	return dir
}

// Tree is every path under dir, relative to it in slash form, with what it
// is: a file's content, a folder's "/" and a link's "-> " and target (never
// followed); what a test compares to show that nothing under dir changed.
func Tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "-> " + to
		case d.IsDir():
			out[rel] = "/"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Changed lists the paths where two Trees differ (added, removed or
// changed), sorted: a short account of what a command did to a folder.
func Changed(before, after map[string]string) []string {
	var out []string
	for p, b := range before {
		if a, ok := after[p]; !ok || a != b {
			out = append(out, p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
