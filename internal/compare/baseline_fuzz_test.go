package compare_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/compare"
)

// Issue 16, item 7: a baseline file under arbitrary input: no panic, no
// number that is not finite, and what reads writes a file that reads back
// to the same bytes. Seeds are the repository's baselines, and the
// baseline of the recorded lease pair (two runs: the spread between them).
func FuzzRead(f *testing.F) {
	seeds, err := filepath.Glob("../../golden/perf/*.json")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no baselines: %v", err)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	pair, err := compare.FromRuns([]string{"../../fixtures/runs/tiny-llama", "../../fixtures/runs/tiny-llama-lease2"}, 3, false)
	if err != nil {
		f.Fatal(err)
	}
	var seed bytes.Buffer
	if err := pair.Write(&seed); err != nil {
		f.Fatal(err)
	}
	f.Add(seed.String())
	f.Fuzz(func(t *testing.T, s string) {
		b, err := compare.Read(strings.NewReader(s), "b.json")
		if err != nil {
			return
		}
		for _, st := range b.Stages {
			if math.IsNaN(st.MeanMS) || math.IsInf(st.MeanMS, 0) {
				t.Fatalf("stage %q: mean %v", st.Name, st.MeanMS)
			}
		}
		var w1, w2 bytes.Buffer
		if err := b.Write(&w1); err != nil {
			t.Fatalf("a baseline that reads does not write: %v", err)
		}
		back, err := compare.Read(bytes.NewReader(w1.Bytes()), "b.json")
		if err != nil {
			t.Fatalf("does not read back: %v\n%s", err, w1.Bytes())
		}
		if err := back.Write(&w2); err != nil || !bytes.Equal(w1.Bytes(), w2.Bytes()) {
			t.Fatalf("changed on reading back (%v):\n%s\n---\n%s", err, w1.Bytes(), w2.Bytes())
		}
	})
}
