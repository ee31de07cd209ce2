package workload

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Issue 16, item 7: the workload report and stage1/runs.json under
// arbitrary input: no panic, every number read is finite and not
// negative, and runs.json reads back what it writes. Seeds are recorded
// reports.
func FuzzReadReport(f *testing.F) {
	ps, err := filepath.Glob("../../fixtures/runs/*/stage1/report.json")
	if err != nil || len(ps) == 0 {
		f.Fatalf("no recorded stage1/report.json: %v", err)
	}
	for _, p := range ps {
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
			if s := model.Summarize(st.MS); math.IsInf(s.MeanMS, 0) || math.IsInf(s.SDMS, 0) || math.IsNaN(s.SDMS) {
				t.Fatalf("stage %s: its statistics are not finite: %+v", name, s)
			}
		}
	})
}

// FuzzReadRuns: stage1/runs.json (a program run whole, its wall time per
// run). Seeds are the recorded runs' runs.json.
func FuzzReadRuns(f *testing.F) {
	ps, err := filepath.Glob("../../fixtures/runs/*/stage1/runs.json")
	if err != nil || len(ps) == 0 {
		f.Fatalf("no recorded stage1/runs.json: %v", err)
	}
	for _, p := range ps {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
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
