package baseline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
)

// DefaultDir is where Check keeps baselines, relative to the test's working
// directory (the package directory under go test).
const DefaultDir = "golden/perf"

// Checker checks runs against the baselines in a directory.
type Checker struct {
	Dir string // DefaultDir when ""
	Top int    // kernels kept when writing a baseline; DefaultTop when 0
}

// Check compares the run directory runDir with the baseline
// golden/perf/<name>.json, within tol, as Checker{}.Check does.
func Check(t testing.TB, name, runDir string, tol Tolerances) {
	t.Helper()
	Checker{}.Check(t, name, runDir, tol)
}

// Check compares the run directory runDir with the baseline <Dir>/<name>.json
// within tol. It fails the test (t.Errorf: the test goes on) when anything
// regressed beyond tol, printing the table of what moved; improvements are
// logged. Under goldie's -update flag (or GOLDIE_UPDATE=1 where no -update
// flag is registered, as goldie itself reads it) it writes the baseline from
// the run instead, and a missing baseline says to do so.
func (c Checker) Check(t testing.TB, name, runDir string, tol Tolerances) {
	t.Helper()
	dir, top := c.Dir, c.Top
	if dir == "" {
		dir = DefaultDir
	}
	if top == 0 {
		top = DefaultTop
	}
	if !filepath.IsLocal(name) || name == "" {
		t.Errorf("baseline %q: want a plain name (the file is %s/NAME.json)", name, dir)
		return
	}
	path := filepath.Join(dir, name+".json")
	if _, err := tol.Fractions(); err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	run, err := FromRunTop(runDir, top)
	if err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	if Updating() {
		var b bytes.Buffer
		err := run.Write(&b)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o755)
		}
		if err == nil {
			err = artifacts.WriteFileAtomic(path, b.Bytes())
		}
		if err != nil {
			t.Errorf("baseline %s: %v", path, err)
			return
		}
		t.Logf("baseline %s: written from %s", path, runDir)
		return
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("baseline %s: not found: run the test with -update to write it from this run (%s)", path, runDir)
		return
	}
	if err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	defer f.Close()
	base, err := Read(f, path)
	if err != nil {
		t.Errorf("baseline %v", err)
		return
	}
	res, err := Compare(base, run, tol)
	if err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	switch {
	case res.Regression || res.Incomplete():
		t.Errorf("baseline %s: the run moved beyond its tolerances (%s); if this is expected, rewrite the baseline with -update\n\n%s",
			path, tolText(tol), res.MovedMarkdown())
	case len(res.Improvements) > 0:
		t.Logf("baseline %s: the run improved on its baseline; -update keeps the better numbers\n\n%s", path, res.MovedMarkdown())
	}
}

// Updating reports whether golden files (baselines, a run's structure) are to be rewritten: goldie's -update
// flag when a package registered it, else GOLDIE_UPDATE as goldie reads it.
func Updating() bool {
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			if v, ok := g.Get().(bool); ok {
				return v
			}
		}
		v, _ := strconv.ParseBool(f.Value.String())
		return v
	}
	switch strings.ToLower(os.Getenv("GOLDIE_UPDATE")) {
	case "1", "true", "t":
		return true
	}
	return false
}

func tolText(tol Tolerances) string {
	th, _ := tol.Fractions()
	p := func(f float64) string { return strconv.FormatFloat(100*f, 'g', -1, 64) + "%" }
	return fmt.Sprintf("stages %s, kernels %s, regions %s, MFU %s", p(th.Stage), p(th.Kernel), p(th.Region), p(th.MFU))
}
