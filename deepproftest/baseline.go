package deepproftest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/harness"
)

// DefaultTolerances is 10% for every part (harness.Tolerances: how far a
// run may move from its baseline, in percent of the baseline, per part).
func DefaultTolerances() harness.Tolerances { return harness.DefaultTolerances() }

// BaselineDir is where CheckBaseline keeps baselines, relative to the test's working
// directory (the package directory under go test).
const BaselineDir = "golden/perf"

// BaselineChecker checks runs against the baselines in a directory.
type BaselineChecker struct {
	Dir string // BaselineDir when ""
	Top int    // kernels kept when writing a baseline; the default, 20, when 0
}

// CheckBaseline compares the run directory runDir with the baseline
// golden/perf/<name>.json, within tol, as BaselineChecker{}.Check does.
func CheckBaseline(t testing.TB, name, runDir string, tol harness.Tolerances) {
	t.Helper()
	BaselineChecker{}.Check(t, name, runDir, tol)
}

// Check compares the run directory runDir with the baseline <Dir>/<name>.json
// within tol. It fails the test (t.Errorf: the test goes on) when anything
// regressed beyond tol, printing the table of what moved; improvements are
// logged. Under goldie's -update flag (or GOLDIE_UPDATE=1 where no -update
// flag is registered, as goldie itself reads it) it writes the baseline from
// the run instead, and a missing baseline says to do so.
func (c BaselineChecker) Check(t testing.TB, name, runDir string, tol harness.Tolerances) {
	t.Helper()
	dir, top := c.Dir, c.Top
	if dir == "" {
		dir = BaselineDir
	}
	if top == 0 {
		top = harness.DefaultBaselineTop
	}
	if !filepath.IsLocal(name) || name == "" {
		t.Errorf("baseline %q: want a plain name (the file is %s/NAME.json)", name, dir)
		return
	}
	path := filepath.Join(dir, name+".json")
	if _, err := tol.Thresholds(); err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	if updating() {
		err := os.MkdirAll(filepath.Dir(path), 0o755)
		if err == nil {
			err = harness.WriteBaseline(path, runDir, top)
		}
		if err != nil {
			t.Errorf("baseline %s: %v", path, err)
			return
		}
		t.Logf("baseline %s: written from %s", path, runDir)
		return
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		t.Errorf("baseline %s: not found: run the test with -update to write it from this run (%s)", path, runDir)
		return
	}
	m, err := harness.CompareBaseline(path, runDir, top, tol)
	if err != nil {
		t.Errorf("baseline %s: %v", path, err)
		return
	}
	switch {
	case m.Beyond:
		t.Errorf("baseline %s: the run moved beyond its tolerances (%s); if this is expected, rewrite the baseline with -update\n\n%s",
			path, tolText(tol), m.Table)
	case m.Improved:
		t.Logf("baseline %s: the run improved on its baseline; -update keeps the better numbers\n\n%s", path, m.Table)
	case m.Host:
		t.Logf("baseline %s: the host moved a stage's wall, its GPU work unchanged: reported, not failing (tolerances' gate: host fails it)\n\n%s", path, m.Table)
	}
}

// updating reports whether golden files (baselines, a run's structure) are to be rewritten: goldie's -update
// flag when a package registered it, else GOLDIE_UPDATE as goldie reads it.
func updating() bool {
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

// tolText is the tolerances in use, defaults filled in: "stages 10%,
// kernels 10%, regions 10%, MFU 10%".
func tolText(tol harness.Tolerances) string {
	th, _ := tol.Thresholds()
	p := func(f float64) string { return strconv.FormatFloat(100*f, 'g', -1, 64) + "%" }
	return fmt.Sprintf("stages %s, kernels %s, regions %s, MFU %s", p(th.Stage), p(th.Kernel), p(th.Region), p(th.MFU))
}
