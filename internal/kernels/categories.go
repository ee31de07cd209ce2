package kernels

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Other is the category of a kernel that no pattern matches.
const Other = "other"

// Communication is the category of collectives and other communication
// kernels (NCCL, custom all-reduce): the default specs' first, so that no
// other pattern takes them. The timeline splits a phase's GPU time between
// these and compute; a multi-GPU session leaves them out of the deep pass.
const Communication = "communication"

// Category is one named kernel-name pattern.
type Category struct {
	Name    string
	Pattern *regexp.Regexp
	needs   *needs // set by Parse
}

// Categories is an ordered category table: the first pattern that matches a
// kernel name gives its category.
type Categories []Category

// defaultSpecs is the built-in table. Order matters, because kernel names
// nest: a PyTorch copy is "unrolled_elementwise_kernel<...direct_copy_kernel_cuda...>",
// a FlashAttention kernel carries "cutlass::bfloat16_t" in its template
// arguments, cuBLASLt's split-K reduction and NCCL's all-reduce both say
// "reduce", and top-k is "gatherTopK". So: communication, attention and
// GEMM first, then normalization, reduction and copy, and elementwise last,
// because "elementwise" is the generic PyTorch kernel that wraps most of the
// others.
var defaultSpecs = []string{
	// NCCL kernels (ncclDevKernel_AllReduce_Sum_bf16_RING_LL,
	// ncclKernel_SendRecv_RING) and custom all-reduce (vLLM's
	// cross_device_reduce_1stage).
	`communication=(?i)nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|cross_device`,
	// FlashAttention (flash_fwd_*, pytorch_flash::), cuDNN SDPA, PyTorch's
	// memory-efficient attention (fmha_cutlassF_*), FlashInfer's
	// BatchPrefillWithPagedKVCacheKernel and the like. Softmax inside these
	// is attention; a standalone softmax kernel is a reduction.
	`attention=(?i)flash|fmha|sdpa|attention|attn|(prefill|decode)with\w*kvcache`,
	// cuBLAS/cuBLASLt (nvjet_*, gemvx, gemmSN, gemmk1, splitKreduce, which is
	// the second half of a split-K GEMM), CUTLASS (cutlass_80_tensorop_*,
	// Kernel2<cutlass_...>), xmma (sm90_xmma_gemm_*), and convolutions run as
	// implicit GEMM (sm80_xmma_fprop_implicit_gemm_*, cutlass_tensorop_*fprop*).
	`gemm=(?i)gemm|gemv|nvjet|xmma|cutlass_|cublas|splitkreduce|matmul`,
	// RMSNorm and LayerNorm kernels, PyTorch's layer-norm statistics
	// (RowwiseMoments). RMSNorm written in Python runs as pow, mean, rsqrt and
	// mul kernels, and is classified as those.
	`normalization=(?i)(rms|layer|group|batch|instance)_?norm|rowwisemoments|normaliz`,
	// PyTorch reduce_kernel (sum, mean, argmax, any/all), softmax, top-k,
	// sorts and scans (cub DeviceRadixSort, DeviceScan), cuDNN's
	// lean_reduction_kernel.
	`reduction=(?i)reduce|reduction|softmax|arg_?max|arg_?min|top_?k|sort|scan|cumsum|cumprod`,
	// Data movement: copies and dtype casts (direct_copy_kernel_cuda,
	// bfloat16_copy_kernel_cuda, fused__autocast_to), concatenation
	// (CatArrayBatchedCopy), indexing, gather and scatter, embedding lookups,
	// layout transposes (nchwToNhwc), fills and memset/memcpy.
	`copy=(?i)copy|memcpy|memset|catarray|concat|gather|scatter|index_?select|index_put|index_kernel|embedding|transpose|permute|nchwtonhwc|nhwctonchw|fillfunctor|fill_\w*kernel|autocast_to`,
	// Pointwise kernels: PyTorch's vectorized/unrolled elementwise kernels
	// (add, mul, pow, rsqrt, sin/cos, silu, random fills), activation
	// kernels, and plain add/mul/scale/axpy kernels.
	`elementwise=(?i)elementwise|act_and_mul|silu|gelu|relu|sigmoid|tanh|rotary|\b(add|mul|scale|axpy)_kernel\b`,
}

// DefaultSpecs returns the built-in category table as "name=regex" strings,
// in order: the profile's default for report.categories.
func DefaultSpecs() []string { return slices.Clone(defaultSpecs) }

var defaultCategories = sync.OnceValue(func() Categories {
	c, err := Parse(defaultSpecs)
	if err != nil {
		panic("classify: built-in category table: " + err.Error())
	}
	return c
})

// Default returns the built-in category table (DefaultSpecs, compiled).
func Default() Categories { return slices.Clone(defaultCategories()) }

// SpecError is a category spec that cannot be used.
type SpecError struct {
	Index int    // 1-based position in the list
	Spec  string // the entry as given
	Msg   string
	Err   error // the regexp error, if that is what is wrong
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("category %d (%q): %s", e.Index, e.Spec, e.Msg)
}

func (e *SpecError) Unwrap() error { return e.Err }

// Parse compiles "name=regex" specs, in order. The name is what precedes the
// first '='; the pattern (Go RE2 syntax, unanchored, case-sensitive unless it
// says (?i)) is all that follows. A name may appear in several entries.
func Parse(specs []string) (Categories, error) {
	out := make(Categories, 0, len(specs))
	for i, s := range specs {
		name, pat, ok := strings.Cut(s, "=")
		switch {
		case !ok:
			return nil, &SpecError{Index: i + 1, Spec: s, Msg: `no "=": write name=regex`}
		case strings.TrimSpace(name) == "":
			return nil, &SpecError{Index: i + 1, Spec: s, Msg: "empty category name before '='"}
		case name != strings.TrimSpace(name):
			return nil, &SpecError{Index: i + 1, Spec: s, Msg: fmt.Sprintf("category name %q has leading or trailing spaces", name)}
		case pat == "":
			return nil, &SpecError{Index: i + 1, Spec: s, Msg: "empty pattern after '=' (it would match every kernel)"}
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			return nil, &SpecError{Index: i + 1, Spec: s, Msg: fmt.Sprintf("bad pattern: %v", err), Err: err}
		}
		out = append(out, Category{Name: name, Pattern: re, needs: prefilter(pat)})
	}
	return out, nil
}

// MaxClassifiedName is the most of a kernel name Of reads: a real name is a
// few KB; a longer one is classified by its first MaxClassifiedName bytes,
// so that a hostile name costs no more than that.
const MaxClassifiedName = 64 << 10

// Of returns the category of a kernel name: the first whose pattern matches
// (within the name's first MaxClassifiedName bytes), or Other.
func (c Categories) Of(kernel string) string {
	if len(kernel) > MaxClassifiedName {
		kernel = kernel[:MaxClassifiedName]
	}
	m := newMatcher(kernel)
	for i := range c {
		if m.matches(&c[i]) {
			return c[i].Name
		}
	}
	return Other
}

// matcher matches one kernel name against categories' patterns, each
// ruled out by its literals where it can be.
type matcher struct {
	name, lower string
	ascii       bool
}

func newMatcher(kernel string) matcher {
	lower, ascii := asciiLower(kernel)
	return matcher{name: kernel, lower: lower, ascii: ascii}
}

func (m matcher) matches(cat *Category) bool {
	if m.ascii && cat.needs != nil && cat.needs.rules(m.name, m.lower) {
		return false
	}
	return cat.Pattern.MatchString(m.name)
}

// Names returns the category names in table order, each once, then Other.
func (c Categories) Names() []string {
	var names []string
	for _, cat := range c {
		if !slices.Contains(names, cat.Name) {
			names = append(names, cat.Name)
		}
	}
	if !slices.Contains(names, Other) {
		names = append(names, Other)
	}
	return names
}

// Is reports whether Of(kernel) would be category, reading the patterns only
// up to the last entry of that category: a check for one category (is this
// a collective?) made on every kernel name of a run costs one pattern where
// that entry comes first, as communication does in the default table.
func (c Categories) Is(kernel, category string) bool {
	if category == Other {
		return c.Of(kernel) == Other // no pattern matched, or one named so
	}
	last := -1
	for i, cat := range c {
		if cat.Name == category {
			last = i
		}
	}
	if last < 0 {
		return false
	}
	if len(kernel) > MaxClassifiedName {
		kernel = kernel[:MaxClassifiedName]
	}
	m := newMatcher(kernel)
	for i := range c[:last+1] {
		if m.matches(&c[i]) {
			return c[i].Name == category
		}
	}
	return false
}
