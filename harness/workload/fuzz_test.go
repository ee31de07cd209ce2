package workload

import (
	"math"
	"os"
	"strings"
	"testing"
)

// Issue 16, item 7: the workload report and stage1/runs.json under
// arbitrary input: no panic, every number read is finite and not
// negative, and runs.json reads back what it writes. Seeds are recorded
// reports.
func FuzzReadReport(f *testing.F) {
	for _, p := range []string{"../../fixtures/runs/tiny-llama/stage1/report.json", "../../fixtures/runs/llama3-8b-roofline/stage1/report.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"model": {"name": "m"}, "stages": {"prefill": {"ms": [1e308, 1e308]}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		rep, err := ReadReport(strings.NewReader(s), "report.json")
		if err != nil {
			return
		}
		for name, st := range rep.Stages {
			for _, v := range st.MS {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("stage %s: %v read as a duration", name, v)
				}
			}
		}
	})
}

func FuzzReadRuns(f *testing.F) {
	f.Add(`{"runs": [{"wall_ms": 43951.976}, {"wall_ms": 32116.481}]}`)
	f.Add(`{"runs": []}`)
	f.Fuzz(func(t *testing.T, s string) {
		runs, err := ReadRuns(strings.NewReader(s), "runs.json")
		if err != nil {
			return
		}
		b, err := runs.JSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadRuns(strings.NewReader(string(b)), "runs.json")
		if err != nil {
			t.Fatalf("does not read back: %v\n%s", err, b)
		}
		if len(back.Runs) != len(runs.Runs) {
			t.Fatalf("%d runs, %d read back", len(runs.Runs), len(back.Runs))
		}
		for i := range runs.Runs {
			if back.Runs[i] != runs.Runs[i] {
				t.Fatalf("run %d: %v, read back %v", i, runs.Runs[i], back.Runs[i])
			}
		}
	})
}
