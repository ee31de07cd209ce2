package session

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/kernels"
)

// The CUPTI library's collectives (collective() in src/deepprof_cupti.c,
// its names' words, case and underscores aside) cover every alternative of
// the communication category's default pattern (package kernels): a kernel
// the reports call communication is never replayed in the run.
func TestCollectiveWordsCoverCommunication(t *testing.T) {
	src, err := os.ReadFile("src/deepprof_cupti.c")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)static const char \*const words\[\] = \{(.*?)\};`).FindSubmatch(src)
	require.NotNil(t, m, "collective()'s word list")
	var words []string
	for _, w := range regexp.MustCompile(`"([a-z]+)"`).FindAllSubmatch(m[1], -1) {
		words = append(words, string(w[1]))
	}
	var pattern string
	for _, spec := range kernels.DefaultSpecs() {
		if p, ok := strings.CutPrefix(spec, kernels.Communication+"="); ok {
			pattern = strings.TrimPrefix(p, "(?i)")
		}
	}
	require.NotEmpty(t, pattern, "the communication category's default pattern")
	for _, alt := range strings.Split(pattern, "|") {
		folded := strings.NewReplacer("_?", "", "_", "").Replace(alt)
		assert.Contains(t, words, folded, "the communication alternative %q has no word in the library's collective()", alt)
	}
}
