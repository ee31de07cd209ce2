package rundir

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Issue 16, item 7: env.json under arbitrary input: what the summary
// reads (EnvInfo) does not panic, and what reads writes the same JSON
// again. Seeds are recorded runs' env.json.
func FuzzEnvJSON(f *testing.F) {
	for _, r := range []string{"tiny-llama", "any-vlm-qwen2-vl"} {
		b, err := os.ReadFile("../../fixtures/runs/" + r + "/env.json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		var env EnvInfo
		if json.Unmarshal([]byte(s), &env) != nil {
			return
		}
		b1, err := env.JSON()
		if err != nil {
			t.Fatalf("an env.json that reads does not write: %v", err)
		}
		var back EnvInfo
		if err := json.Unmarshal(b1, &back); err != nil {
			t.Fatalf("does not read back: %v", err)
		}
		b2, _ := back.JSON()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("changed on reading back:\n%s\n%s", b1, b2)
		}
	})
}
