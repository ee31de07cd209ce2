package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Issue 16, item 7: manifest.json under arbitrary input: Open does not
// panic, and a manifest it accepts writes JSON that reads back the same.
// Seeds are recorded runs' manifests.
func FuzzOpenManifest(f *testing.F) {
	for _, r := range []string{"tiny-llama", "any-vlm-qwen2-vl"} {
		b, err := os.ReadFile(filepath.Join("../../fixtures/runs", r, ManifestJSON))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"run_id": "x", "artifacts": [{"path": "../../etc/passwd", "status": "complete"}]}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		if err := os.WriteFile(filepath.Join(dir, ManifestJSON), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(dir)
		if err != nil {
			return
		}
		r.CheckPresence()
		b1, err := json.Marshal(r.Manifest())
		if err != nil {
			t.Fatalf("an accepted manifest does not write: %v", err)
		}
		var back Manifest
		if err := json.Unmarshal(b1, &back); err != nil {
			t.Fatalf("does not read back: %v", err)
		}
		b2, _ := json.Marshal(back)
		if string(b1) != string(b2) {
			t.Fatalf("changed on reading back:\n%s\n%s", b1, b2)
		}
	})
}
