package model

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// checkDir asserts what RegionDir promises of one result.
func checkDir(t *testing.T, name, dir string) {
	t.Helper()
	if len(dir) == 0 || len(dir) > MaxDirLen {
		t.Fatalf("RegionDir(%q) = %q: %d bytes", name, dir, len(dir))
	}
	if dir == "." || dir == ".." || !filepath.IsLocal(dir) || strings.ContainsAny(dir, "/\\\x00") {
		t.Fatalf("RegionDir(%q) = %q: not one local name", name, dir)
	}
	for i := 0; i < len(dir); i++ {
		c := dir[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			t.Fatalf("RegionDir(%q) = %q: byte %q", name, dir, c)
		}
	}
	root := filepath.Join("ncu", "regions")
	rel, err := filepath.Rel(root, filepath.Join(root, dir))
	if err != nil || rel != dir {
		t.Fatalf("RegionDir(%q) = %q leaves %s (%q, %v)", name, dir, root, rel, err)
	}
}

func TestRegionDir(t *testing.T) {
	long := strings.Repeat("decode_step/", 40)
	cases := []struct{ name, want string }{
		{"prefill", "prefill"},
		{"decode_all", "decode_all"},
		{"decode_all/decode_step", "decode_all_decode_step-690d302f"},
		{"Prefill", "prefill-"},
		{"..", "region-"},
		{".", "region-"},
		{"../../etc/passwd", "etc_passwd-"},
		{"/abs", "abs-"},
		{"a\x00b", "a_b-"},
		{"nul", "nul-"},
		{"COM1", "com1-"},
		{"", "region-"},
		{long, "decode_step_decode_step_"},
		{"名前", "region-"},
		// issue 53: deepprof's own names in ncu/regions/ are never a
		// region's folder: a range named report.md once removed them
		{"report.md", "report.md-"},
		{"report.json", "report.json-"},
		{"kernels.md", "kernels.md-"},
		{"process-1-device-0", "process-1-device-0-"},
	}
	for _, c := range cases {
		dir := RegionDir(c.name, map[string]bool{})
		checkDir(t, c.name, dir)
		assert.True(t, strings.HasPrefix(dir, c.want), "RegionDir(%q) = %q, want prefix %q", c.name, dir, c.want)
	}
	// Names that differ only in case, or sanitize alike, get distinct
	// directories; so does the same name twice with one taken map.
	taken := map[string]bool{}
	seen := map[string]string{}
	for _, n := range []string{"prefill", "Prefill", "PREFILL", "pre fill", "pre/fill", "pre_fill", "pre\\fill", "prefill", long, long + "x"} {
		d := RegionDir(n, taken)
		checkDir(t, n, d)
		if prev, dup := seen[strings.ToLower(d)]; dup {
			t.Errorf("%q and %q both got %q", prev, n, d)
		}
		seen[strings.ToLower(d)] = n
	}
	// Deterministic: the same names in the same order give the same dirs.
	assert.Equal(t, RegionDir("x/y", map[string]bool{}), RegionDir("x/y", map[string]bool{}))
}

// FuzzRegionDir: no directory ever leaves ncu/regions/, names are at most 80
// bytes of a-z 0-9 . _ -, and distinct names given one taken map get distinct
// directories (case-insensitively).
func FuzzRegionDir(f *testing.F) {
	for _, s := range []string{"prefill", "decode_all/decode_step", "LLM@prefill", "..", "../x", "/", "\x00",
		"step: 1 \"quoted\" / a@b", "Prefill", strings.Repeat("a", 300), "con.txt", "a..b", ".hidden", "x."} {
		f.Add(s, strings.ToUpper(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		taken := map[string]bool{}
		da := RegionDir(a, taken)
		db := RegionDir(b, taken)
		checkDir(t, a, da)
		checkDir(t, b, db)
		if strings.EqualFold(da, db) {
			t.Fatalf("%q and %q both got %q / %q", a, b, da, db)
		}
		if a != b && RegionDir(a, nil) == RegionDir(b, nil) && RegionDir(a, nil) == a {
			t.Fatalf("lossless %q met %q", a, b)
		}
	})
}
