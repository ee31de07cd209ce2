package timeline

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// TestDemangledAsCUPTIWrites: every kernel of the recorded CUPTI runs,
// demangled here from its mangled name alone, names the kernel as CUPTI's
// own demangled name does (ncu.SpellingKey, the key the deep pass's
// results are matched by), so that a name CUPTI leaves mangled is shown and
// matched like the others.
func TestDemangledAsCUPTIWrites(t *testing.T) {
	files, err := filepath.Glob("../../fixtures/runs/*/timeline/cupti/cupti-*.tsv*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	n := 0
	for _, f := range files {
		tl, err := ReadFiles(f)
		require.NoError(t, err)
		for _, p := range tl.Processes {
			seen := map[*Function]bool{}
			for i := range p.Kernels {
				k := p.Fn(&p.Kernels[i])
				if seen[k] || !strings.HasPrefix(k.Mangled, "_Z") {
					continue
				}
				seen[k] = true
				got, _ := demangled(k.Mangled, "")
				assert.Equal(t, ncu.SpellingKey(k.Demangled), ncu.SpellingKey(got), "%s: %s", f, k.Mangled)
				n++
			}
		}
	}
	t.Logf("%d kernel names", n)
	assert.Greater(t, n, 50)
}

func TestDemangledKeepsWhatCUPTIGave(t *testing.T) {
	var got string
	got, _ = demangled("_Z1ki", "k(int)")
	assert.Equal(t, "k(int)", got, "CUPTI's spelling wins")
	got, _ = demangled("_Z1ki", "")
	assert.Equal(t, "k(int)", got, "no demangled name")
	got, _ = demangled("_Z1ki", "_Z1ki")
	assert.Equal(t, "k(int)", got, "the mangled name again")
	got, _ = demangled("nvjet_sm90", "nvjet_sm90")
	assert.Equal(t, "nvjet_sm90", got, "an extern C name")
	got, _ = demangled("_Znot-a-name", "")
	assert.Equal(t, "", got, "a name that does not demangle stays as given")
	long := "_Z" + strings.Repeat("1k", MaxDemangled)
	got, _ = demangled(long, "")
	assert.Equal(t, "", got, "past MaxDemangled, nothing is demangled")
}
