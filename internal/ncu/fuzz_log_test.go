package ncu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 16, item 7: ncu's log, diagnosed and followed line by line, under
// arbitrary input: no panic, every finding on a line of the log and
// saying what happened. Seeds are recorded ncu logs.
func FuzzDiagnoseAndProgress(f *testing.F) {
	logs, err := filepath.Glob("../../fixtures/logs/ncu-*.txt")
	if err != nil || len(logs) == 0 {
		f.Fatalf("no recorded ncu logs: %v", err)
	}
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, log string) {
		lines := strings.Count(log, "\n") + 1
		for _, fd := range Diagnose([]byte(log)) {
			if fd.Line < 1 || fd.Line > lines {
				t.Fatalf("finding %q on line %d of a %d-line log", fd.Kind, fd.Line, lines)
			}
			if fd.Message == "" {
				t.Fatalf("finding %q says nothing", fd.Kind)
			}
		}
		clock := time.Unix(0, 0)
		p := NewProgressLine(func() time.Time { return clock })
		for _, l := range strings.Split(log, "\n") {
			p.Feed(l)
			_ = p.String()
		}
	})
}
