package timeline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llm-perf-opt/deepprof/internal/synth"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

func TestDemangledWithinBudget(t *testing.T) {
	n := synth.HostileMangled(20)
	assert.Less(t, len(n), 250)
	got, kept := timeline.Demangled(n, "")
	assert.Equal(t, "", got, "past timeline.MaxDemangledOut, the name stays as given")
	assert.True(t, kept)
	got, kept = timeline.Demangled(synth.HostileMangled(8), "")
	assert.False(t, kept, "a few levels fit")
	assert.True(t, strings.HasPrefix(got, "f(B, A<B, B>"), got)
	got, kept = timeline.Demangled("_Z1f"+strings.Repeat("P", timeline.MaxDemangled)+"i", "")
	assert.True(t, kept, "past timeline.MaxDemangled")
	assert.Equal(t, "", got)
}

// BenchmarkDemangleHostile: issue 35's bound is 50 ms for a 216-byte
// hostile name; a pointer nested to the length limit is the parser's
// worst case.
func BenchmarkDemangleHostile(b *testing.B) {
	for _, c := range []struct{ name, mangled string }{
		{"backrefs-216B", synth.HostileMangled(20)[:216]},
		{"backrefs-223B", synth.HostileMangled(20)},
		{"nested-pointers-4KiB", "_Z1f" + strings.Repeat("P", timeline.MaxDemangled-5) + "i"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				timeline.Demangled(c.mangled, "")
			}
		})
	}
}
