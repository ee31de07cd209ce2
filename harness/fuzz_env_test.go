package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// Issue 16, item 7: env.json under arbitrary input, through its one
// reader (ReadEnv, which the summary and the session use): no panic, and
// what reads writes (EnvInfo.JSON) the same JSON again. Seeds are the
// recorded runs' env.json.
func FuzzEnvJSON(f *testing.F) {
	ps, err := filepath.Glob("../fixtures/runs/*/env.json")
	if err != nil || len(ps) == 0 {
		f.Fatalf("no recorded env.json: %v", err)
	}
	for _, p := range ps {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		env, err := workload.ReadEnv(strings.NewReader(s), "env.json")
		if err != nil {
			return
		}
		b1, err := env.JSON()
		if err != nil {
			t.Fatalf("an env.json that reads does not write: %v", err)
		}
		back, err := workload.ReadEnv(bytes.NewReader(b1), "env.json")
		if err != nil {
			t.Fatalf("does not read back: %v\n%s", err, b1)
		}
		b2, _ := back.JSON()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("changed on reading back:\n%s\n%s", b1, b2)
		}
	})
}
