package ncu_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

func TestSpellingKey(t *testing.T) {
	for _, c := range [][2]string{
		// names seen in the recorded runs: the C++ runtime's spelling (CUPTI), then ncu's
		{"scale_kernel(float*, float, int)", "scale_kernel(float *, float, int)"},
		{"add_kernel(float const*, float const*, float*, int)", "add_kernel(const float *, const float *, float *, int)"},
		{"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
			"void at::vectorized_elementwise_kernel<8, at::CUDAFunctor_add<c10::BFloat16>, std::array<char *, 3>>(int, T2, T3)"},
		{"void at::native::(anonymous namespace)::f<float>(int)::{lambda(float)#1}", "void at::<unnamed>::f<float>(int)::[lambda(float) (instance 1)]"},
		{"void k<false, 2u>(int)", "void k<0, 2>(int)"},
		{"void k<4, at::native::add_kernel(at::TensorIteratorBase&)::{lambda(float, float)#1}>(int, T2)", "void k<4, at::add_kernel(at::TensorIteratorBase &)::[lambda(float, float) (instance 1)]>(int, T2)"},
		// parts of the CUTLASS grouped GEMM of the mixture-of-experts run
		// (H100): an enum argument as a cast, an empty parameter pack
		{"cute::SM90::GMMA::MMA_64x128x16_F32BF16BF16_SS<(cute::SM90::GMMA::Major)0, (cute::SM90::GMMA::Major)1>", "cute::SM90::GMMA::MMA_64x128x16_F32BF16BF16_SS<0, 1>"},
		{"cute::tuple<cute::C<64>, cute::C<32> > >", "cute::tuple<cute::C<64>, cute::C<32>>, >"},
	} {
		assert.Equal(t, ncu.SpellingKey(c[0]), ncu.SpellingKey(c[1]), "%s\n%s", c[0], c[1])
	}
	// what tells kernels apart stays
	for _, c := range [][2]string{
		{"void k<8, float>(int)", "void k<4, float>(int)"},
		{"void k<8, float>(int)", "void k<8, c10::Half>(int)"},
		{"scale_kernel(float*, float, int)", "add_kernel(float*, float, int)"},
		{"void f<1>(int)::{lambda()#1}", "void f<1>(int)::{lambda()#2}"},
		{"void k<4, add_kernel(TensorIteratorBase&)::{lambda(float, float)#1}>(int)", "void k<4, add_kernel(TensorIteratorBase&)::{lambda(double, double)#1}>(int)"},
		{"k<(Major)0>", "k<(Major)1>"},
	} {
		assert.NotEqual(t, ncu.SpellingKey(c[0]), ncu.SpellingKey(c[1]), "%s\n%s", c[0], c[1])
	}
}

func TestMatchSpellings(t *testing.T) {
	m := ncu.MatchSpellings(
		[]string{"scale_kernel(float*, float, int)", "same", "k<1>(int)", "k<1>(float)", "gone(int)"},
		[]string{"scale_kernel(float *, float, int)", "same", "k<1>(T1)"})
	assert.Equal(t, map[string]string{
		"scale_kernel(float*, float, int)": "scale_kernel(float *, float, int)",
		"same":                             "same",
	}, m, "k<1>(int) and k<1>(float) share a key: neither takes k<1>(T1)")
}

// TestSpellingsOfRecordedRuns: the top kernels of every recorded CUPTI run
// against its deep pass's export (ncu 2025.3.1): the key finds the kernel
// the deep pass measured for those it profiled, more than twice as many as
// the same strings alone. A match never changes the kernel's function.
func TestSpellingsOfRecordedRuns(t *testing.T) {
	raws, err := filepath.Glob("../../fixtures/runs/*/ncu/raw.csv.gz")
	require.NoError(t, err)
	exact, matched, cupti := 0, 0, 0
	for _, raw := range raws {
		run := filepath.Dir(filepath.Dir(raw))
		if _, err := os.Stat(filepath.Join(run, "timeline/cupti")); err != nil {
			continue // the table's names are ncu's too
		}
		cupti++
		var k struct {
			Kernels []struct {
				Name string `json:"kernel_name"`
			} `json:"kernels"`
		}
		b, err := os.ReadFile(filepath.Join(run, "kernels.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &k))
		// kernels.json holds every kernel of its scope; the deep pass
		// profiles the top ones (report.top_n, 10 in these runs)
		var top, have []string
		for _, r := range k.Kernels[:min(10, len(k.Kernels))] {
			top = append(top, r.Name)
		}
		seen := map[string]bool{}
		for _, name := range launchNames(t, raw) {
			if !seen[name] {
				seen[name] = true
				have = append(have, name)
			}
		}
		m := ncu.MatchSpellings(top, have)
		for n, h := range m {
			assert.Equal(t, model.FunctionName(n), model.FunctionName(h), "%s: %s matched %s", run, n, h)
			if n == h {
				exact++
			}
		}
		matched += len(m)
		if slices.Contains([]string{"any-vlm-qwen2-vl", "cupti-tiny-llama", "h100-cupti-gpt2", "any-cuda-cpp-two-processes"}, filepath.Base(run)) {
			assert.Len(t, m, len(top), "%s: every top kernel was profiled", run)
		}
	}
	require.GreaterOrEqual(t, cupti, 5, "recorded CUPTI runs with a deep pass")
	t.Logf("%d recorded CUPTI runs: %d top kernels found in the deep pass, %d of them by the same string", cupti, matched, exact)
	assert.Greater(t, matched, 2*exact)
}

// FuzzSpellingKey: any name has a key, without a panic and without a
// space; a name matches itself, and a name with spaces added around its
// punctuation matches it too. Seeded from the recorded runs' kernel names.
func FuzzSpellingKey(f *testing.F) {
	raws, _ := filepath.Glob("../../fixtures/runs/*/ncu/raw.csv.gz")
	for _, raw := range raws {
		for _, name := range launchNames(f, raw) {
			f.Add(name)
		}
	}
	f.Add("void k<(anonymous namespace)::{lambda(float)#1}, 3ul>(int)")
	f.Fuzz(func(t *testing.T, name string) {
		k := ncu.SpellingKey(name)
		if m := ncu.MatchSpellings([]string{name}, []string{name}); m[name] != name {
			t.Fatalf("%q does not match itself: %q", name, m)
		}
		if strings.Contains(k, " ") {
			t.Fatalf("key of %q has a space: %q", name, k)
		}
		spaced := strings.NewReplacer("*", " *", "&", " &", ",", ", ", ">", " >").Replace(name)
		if k2 := ncu.SpellingKey(spaced); k2 != k && !strings.ContainsAny(name, " \t") {
			t.Fatalf("%q and %q have keys %q and %q", name, spaced, k, k2)
		}
	})
}
