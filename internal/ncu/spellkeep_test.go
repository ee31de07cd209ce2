package ncu

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSpellingKeyKept asks for keys from several goroutines, each name
// twice, against the key computed afresh; the names kept stay under the
// bound, and a long name is not kept.
func TestSpellingKeyKept(t *testing.T) {
	names := []string{
		"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
		"(anonymous namespace)::f<true>({lambda()#3})",
	}
	for i := range 2000 {
		names = append(names, "k"+strconv.Itoa(i)+"<(Major)0, 3ul>(int)")
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for _, n := range names {
				assert.Equal(t, spellingKey(n), SpellingKey(n), n)
				assert.Equal(t, spellingKey(n), SpellingKey(n), n)
			}
		})
	}
	wg.Wait()
	// Past the bound (in one goroutine: each key takes a while under -race).
	for i := range maxKeptKeys {
		SpellingKey("f" + strconv.Itoa(i) + "()")
	}
	keys.Lock()
	kept := len(keys.m)
	keys.Unlock()
	assert.LessOrEqual(t, kept, maxKeptKeys)
	assert.Positive(t, kept)

	long := "void " + strings.Repeat("a::", maxKeptName) + "k(int)"
	assert.Equal(t, spellingKey(long), SpellingKey(long))
	keys.Lock()
	_, ok := keys.m[long]
	keys.Unlock()
	assert.False(t, ok, "a name over maxKeptName is not kept")
}
