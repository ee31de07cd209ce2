// SYNTHETIC run directories for tests of run comparison (see the package
// documentation, "Run directories").

package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// Edit changes one thing of a copied run directory.
type Edit struct {
	Label string // for the directory name: a-z, 0-9, '-' and '.'
	Apply func(dir string) error
}

// As is the edit with another label: say what the edit means
// (Write("kernels.json", "{").As("malformed-kernels")).
func (e Edit) As(label string) Edit {
	e.Label = label
	return e
}

// Run copies the recorded run directory src into a new directory under
// t.TempDir(), named "synthetic-<base of src>-<labels>", applies the edits,
// and returns its path. It fails the test on any error.
func Run(t testing.TB, src string, edits ...Edit) string {
	t.Helper()
	return run(t, src, false, edits)
}

// RawRun is Run without the run's derived files (rundir.DerivedRoots):
// what a rebuild reads and nothing it writes, for a test that rebuilds the
// copy.
func RawRun(t testing.TB, src string, edits ...Edit) string {
	t.Helper()
	return run(t, src, true, edits)
}

// RawCopy copies the recorded run directory src to dst without its
// derived files, as RawRun does: a test that rebuilds it has them back.
func RawCopy(dst, src string) error {
	return copyDir(src, dst, true)
}

func run(t testing.TB, src string, raw bool, edits []Edit) string {
	t.Helper()
	id := "synthetic-" + filepath.Base(filepath.Clean(src))
	for _, e := range edits {
		id += "-" + e.Label
	}
	dir := filepath.Join(t.TempDir(), id)
	if err := copyDir(src, dir, raw); err != nil {
		t.Fatalf("difftest: copy %s: %v", src, err)
	}
	for _, e := range edits {
		if err := e.Apply(dir); err != nil {
			t.Fatalf("difftest: %s: %v", e.Label, err)
		}
	}
	if err := editJSON(filepath.Join(dir, "manifest.json"), func(m map[string]any) error {
		m["run_id"] = id
		return nil
	}); err != nil && !os.IsNotExist(err) {
		t.Fatalf("difftest: manifest: %v", err)
	}
	if _, err := rundir.ReadMark(dir); err == nil {
		// its mark says the same, as Create writes it
		if err := rundir.WriteMark(dir, id); err != nil {
			t.Fatalf("difftest: mark: %v", err)
		}
		if _, err := rundir.SweepStaging(dir); err != nil {
			t.Fatalf("difftest: mark: %v", err)
		}
	}
	return dir
}

// ScaleKernel multiplies total_ms and mean_ms of the i-th kernel of
// kernels.json (0: the one with the most time) by f.
func ScaleKernel(i int, f float64) Edit {
	return Edit{Label: fmt.Sprintf("kernel%d-x%g", i, f), Apply: func(dir string) error {
		return editKernel(dir, i, func(k map[string]any) error {
			for _, key := range []string{"total_ms", "mean_ms"} {
				v, ok := k[key].(float64)
				if !ok {
					return fmt.Errorf("kernel %d has no number %s", i, key)
				}
				k[key] = v * f
			}
			return nil
		})
	}}
}

// RenameKernel renames the i-th kernel of kernels.json.
func RenameKernel(i int, name string) Edit {
	return Edit{Label: fmt.Sprintf("kernel%d-renamed", i), Apply: func(dir string) error {
		return editKernel(dir, i, func(k map[string]any) error {
			k["kernel_name"] = name
			return nil
		})
	}}
}

// ScaleStage multiplies every repeat of a stage of stage1/report.json by f.
func ScaleStage(stage string, f float64) Edit {
	return Edit{Label: fmt.Sprintf("%s-x%g", label(stage), f), Apply: func(dir string) error {
		return editRepeats(dir, stage, func(ms []any) error {
			for j := range ms {
				ms[j] = ms[j].(float64) * f
			}
			return nil
		})
	}}
}

// ScaleRepeat multiplies the i-th repeat (0: the first) of a stage of
// stage1/report.json by f: ScaleRepeat("decode", 0, 10) makes a slow first
// repeat, as a run that did not warm up has.
func ScaleRepeat(stage string, i int, f float64) Edit {
	return Edit{Label: fmt.Sprintf("%s-repeat%d-x%g", label(stage), i, f), Apply: func(dir string) error {
		return editRepeats(dir, stage, func(ms []any) error {
			if i < 0 || i >= len(ms) {
				return fmt.Errorf("stage %q has %d repeats, no repeat %d", stage, len(ms), i)
			}
			ms[i] = ms[i].(float64) * f
			return nil
		})
	}}
}

func editRepeats(dir, stage string, fn func(ms []any) error) error {
	return editJSON(filepath.Join(dir, "stage1", "report.json"), func(m map[string]any) error {
		stages, _ := m["stages"].(map[string]any)
		st, _ := stages[stage].(map[string]any)
		ms, ok := st["ms"].([]any)
		if !ok {
			return fmt.Errorf("no stage %q", stage)
		}
		return fn(ms)
	})
}

// Remove deletes a file of the run (rel in slash form); its label is
// "no-" and the file's path without its extension, e.g. "no-kernels".
func Remove(rel string) Edit {
	return Edit{Label: "no-" + label(rel), Apply: func(dir string) error {
		return os.Remove(filepath.Join(dir, filepath.FromSlash(rel)))
	}}
}

// WriteFile replaces (or adds) a file of the run with content; its label is
// "edited-" and the file's path without its extension.
func WriteFile(rel, content string) Edit {
	return Edit{Label: "edited-" + label(rel), Apply: func(dir string) error {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, []byte(content), 0o644)
	}}
}

func label(rel string) string {
	rel = strings.TrimSuffix(rel, path.Ext(rel))
	return strings.NewReplacer("/", "-", "_", "-").Replace(rel)
}

func editKernel(dir string, i int, fn func(map[string]any) error) error {
	return editJSON(filepath.Join(dir, "kernels.json"), func(m map[string]any) error {
		ks, _ := m["kernels"].([]any)
		if i < 0 || i >= len(ks) {
			return fmt.Errorf("kernels.json has %d kernels, no kernel %d", len(ks), i)
		}
		k, ok := ks[i].(map[string]any)
		if !ok {
			return fmt.Errorf("kernel %d is not an object", i)
		}
		return fn(k)
	})
}

// editJSON rewrites a JSON object file through fn, indented as the session
// writes it.
func editJSON(path string, fn func(map[string]any) error) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := fn(m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// copyDir copies the folder src to dst; raw: without a run directory's
// derived files.
func copyDir(src, dst string, raw bool) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if raw && rundir.IsDerived(rel) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// AssertMovedRow checks the row of kernel k in a table of what moved: its
// name escaped, its A and B times (k's, and k's times f) to three significant
// digits, and how it ends.
func AssertMovedRow(t *testing.T, moved string, k model.KernelTotals, f float64, end string) {
	t.Helper()
	prefix := "| kernel | " + render.EscapeCell(k.Name) + " | "
	var row string
	for _, line := range strings.Split(moved, "\n") {
		if strings.HasPrefix(line, prefix) {
			require.Empty(t, row, "one row for the kernel")
			row = line
		}
	}
	require.NotEmpty(t, row, "a row for kernel %s in:\n%s", k.Name, moved)
	assert.True(t, strings.HasSuffix(row, end), row)
	cells := strings.Split(strings.TrimPrefix(row, prefix), " | ")
	require.GreaterOrEqual(t, len(cells), 2, row)
	for i, want := range []float64{k.TotalMS, f * k.TotalMS} {
		ms, ok := strings.CutSuffix(cells[i], " ms")
		require.True(t, ok, "a time in ms: %q", cells[i])
		got, err := strconv.ParseFloat(ms, 64)
		require.NoError(t, err)
		assert.InEpsilon(t, want, got, 0.005, "%q: three significant digits of %v", cells[i], want)
	}
}

// EditJSON changes the JSON object in the file rel of a copied run with fn.
func EditJSON(label, rel string, fn func(map[string]any) error) Edit {
	return Edit{Label: label, Apply: func(dir string) error {
		return editJSON(filepath.Join(dir, filepath.FromSlash(rel)), fn)
	}}
}
