package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Issue 16, item 7: the configuration readers under arbitrary input: no
// panic, and what loads writes a config.yaml that loads back the same.
// Seeds are the repository's own profiles and overrides from its tests.

// realOverrides are the settings of real files as key=value overrides,
// one file's to a list: the recorded runs' config.yaml and the repository's
// profiles, each leaf a key=value (a list of scalars as [a, b]).
func realOverrides(f *testing.F) [][]string {
	var files []string
	for _, pat := range []string{"../../fixtures/runs/*/config.yaml", "../../profiles/*.yaml", "../../profiles/*/*.yaml"} {
		ps, err := filepath.Glob(pat)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, ps...)
	}
	var out [][]string
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		var kv []string
		var walk func(prefix string, v any)
		walk = func(prefix string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for _, k := range slices.Sorted(maps.Keys(v)) {
					walk(strings.TrimPrefix(prefix+"."+k, "."), v[k])
				}
			case []any:
				var items []string
				for _, it := range v {
					if _, nested := it.(map[string]any); nested {
						return
					}
					items = append(items, fmt.Sprint(it))
				}
				kv = append(kv, prefix+"=["+strings.Join(items, ", ")+"]")
			case nil:
			default:
				kv = append(kv, prefix+"="+fmt.Sprint(v))
			}
		}
		walk("", doc)
		out = append(out, kv)
	}
	if len(out) == 0 {
		f.Fatal("no profile or recorded config.yaml")
	}
	return out
}

// quoteWord writes an override as one shell word of $DEEPPROF_OVERRIDES.
func quoteWord(s string) string {
	if !strings.ContainsAny(s, " \t'\"\\") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// FuzzSplitOverrides: $DEEPPROF_OVERRIDES split like a shell's words.
// Seeds: each real file's settings as one $DEEPPROF_OVERRIDES, and
// hand-made corner cases.
func FuzzSplitOverrides(f *testing.F) {
	for _, kv := range realOverrides(f) {
		words := make([]string, len(kv))
		for i, o := range kv {
			words[i] = quoteWord(o)
		}
		f.Add(strings.Join(words, " "))
	}
	for _, s := range []string{`ncu=roofline "nvtx.include=[prefill, decode_all]"`, `a=\'b\' 'c d'`, `x="unterminated`, ``, `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range SplitOverrides(s) {
			if w == "" && !strings.ContainsAny(s, `'"`) {
				t.Fatalf("%q: an empty word from input without quotes", s)
			}
		}
	})
}

// FuzzOverride: one override over the default profiles. Seeds: every
// setting of the real files (realOverrides), and hand-made ones.
func FuzzOverride(f *testing.F) {
	seen := map[string]bool{}
	for _, kv := range realOverrides(f) {
		for _, o := range kv {
			if !seen[o] {
				seen[o] = true
				f.Add(o)
			}
		}
	}
	for _, s := range []string{"ncu.launch_count=3", "nvtx.include=[prefill, decode_all]", "+workload.env.X=1", "ncu=roofline",
		"workload.repeats=1e3", "phases.decode=[gen*]", "model.layers=-1", "timeline.coverage=NaN", "report.categories=[gemm: gemm]"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, o string) {
		c, err := Load(LoadOptions{Dir: "../../profiles", Overrides: []string{o}})
		if err != nil {
			return
		}
		roundTrip(t, c, dir)
	})
}

// FuzzProfileYAML: a profile file of any content over the defaults.
func FuzzProfileYAML(f *testing.F) {
	for _, p := range []string{"stage2.yaml", "ncu/roofline.yaml", "workloads/llama3-8b.yaml", "nsys/default.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../profiles", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("workload:\n  repeats: !!float 1e9\n")
	f.Add("defaults: [../../etc/passwd]\n")
	dir := f.TempDir() // one file, rewritten by each input: cheap enough to minimize with
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "mine.yaml")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(LoadOptions{Dir: dir, Profiles: []string{p}})
		if err != nil {
			return
		}
		roundTrip(t, c, dir)
	})
}

// roundTrip: config.yaml of c reads back as the same YAML.
func roundTrip(t *testing.T, c *Config, dir string) {
	t.Helper()
	y, err := c.YAML()
	if err != nil {
		t.Fatalf("a loaded configuration does not write: %v", err)
	}
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, y, 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(p)
	if err != nil {
		t.Fatalf("config.yaml does not read back: %v\n%s", err, y)
	}
	y2, err := back.YAML()
	if err != nil || string(y2) != string(y) {
		t.Fatalf("config.yaml changed on reading back (%v):\n%s\n---\n%s", err, y, y2)
	}
}
