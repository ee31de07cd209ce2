package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness"
)

// runDiff is "deepprof diff": B against A. It prints the comparison, then
// returns an exitError: 1 when something regressed, 2 when a part could not
// be compared (and nothing regressed) or on any error; nil (0) otherwise.
func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", "diff [--threshold 5%] [--gate gpu|host] [--format text|md|json|csv] [--allow-mismatch] [--allow-partial] RUN_A RUN_B", stdout)
	threshold := fs.String("threshold", "5%", "a change counts when it exceeds this `fraction` of A: 5% or 0.05")
	format := fs.String("format", "", "output `format`: text (aligned plain text within the terminal's width, 120 columns when it does not say; the default), md (Markdown tables; the default into a file named *.md), json or csv (a row a compared stage, kernel, region and MFU figure, numbers unrounded, a stage's row with its cause)")
	mismatch := fs.Bool("allow-mismatch", false, "compare runs of different models, workload shapes (tokens, batch) or kernel sources (every launch or the deep pass's sample), or on different GPUs (their numbers do not measure one thing); refused otherwise, exit 2")
	models := fs.Bool("allow-different-models", false, "the older name of --allow-mismatch")
	gate := fs.String("gate", "", "what fails: `gpu` (a change of a stage's GPU work, a kernel or region, or a GPU-bound stage's wall; a launch-bound stage's wall that moved with its GPU work unchanged is the host's, reported with verdict host, exit 0) or host (that too fails); not given: a baseline file's gate (deepprof baseline --gate), else gpu; given, it wins over the file's")
	allow := fs.Bool("allow-partial", false, "compare runs that are not complete (their manifest says partial, missing or stale files); refused otherwise, exit 2")
	pos, help, err := parseFlags(fs, args)
	if help || err != nil {
		return err
	}
	if len(pos) != 2 {
		return &usageError{fmt.Sprintf("diff takes two runs, RUN_A and RUN_B (run directories or baseline files), got %s", arguments(len(pos)))}
	}
	th, err := parseThreshold(*threshold)
	if err != nil {
		return err
	}
	if _, err := harness.ParseGate(*gate); err != nil {
		return &usageError{"--" + err.Error()}
	}
	f, err := tableFormat(*format, stdout, true)
	if err != nil {
		return err
	}
	res, err := harness.Diff(pos[0], pos[1], harness.DiffOptions{TableOptions: tableOptions(f, stdout), Threshold: th,
		AllowMismatch: *mismatch || *models, AllowPartial: *allow, Gate: *gate}, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	switch {
	case res.Regression:
		return &exitError{1, fmt.Errorf("regression: %s", firstOf(res.Regressions, 3))}
	case res.Incomplete:
		return &exitError{2, fmt.Errorf("incomplete comparison: %s", strings.Join(res.Missing, "; "))}
	}
	return nil
}

// firstOf joins the first n items, each cut to maxItem runes (a kernel's
// demangled name can run to a thousand), and counts the others: the
// report above has them whole.
func firstOf(items []string, n int) string {
	shown := make([]string, 0, n)
	for _, it := range items[:min(n, len(items))] {
		if r := []rune(it); len(r) > maxItem {
			it = string(r[:maxItem-1]) + "…"
		}
		shown = append(shown, it)
	}
	if len(items) <= n {
		return strings.Join(shown, "; ")
	}
	return fmt.Sprintf("%s; and %d more (see the report)", strings.Join(shown, "; "), len(items)-n)
}

// maxItem is the most runes of one item firstOf shows.
const maxItem = 160

// parseThreshold reads "5%" (a percentage) or "0.05" (a fraction below 1).
func parseThreshold(s string) (float64, error) {
	bad := func(why string) error { return &usageError{fmt.Sprintf("--threshold %q: %s", s, why)} }
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, bad("want a percentage (5%) or a fraction (0.05)")
	case v < 0:
		return 0, bad("must not be negative")
	case pct:
		return v / 100, nil
	case v >= 1:
		return 0, bad(fmt.Sprintf("a fraction must be below 1; for percent write %s%%", num))
	}
	return v, nil
}
