package ncu_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// realKernelNames reads the kernel names of the H200 decode export.
func realKernelNames(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../golden/export/h200-llama-decode-basic/raw.csv.kernels.json")
	require.NoError(t, err)
	var doc struct {
		Kernels []struct {
			Name string `json:"kernel_name"`
		} `json:"kernels"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NotEmpty(t, doc.Kernels)
	names := make([]string, len(doc.Kernels))
	for i, k := range doc.Kernels {
		names[i] = k.Name
	}
	return names
}

func TestKernelRegex(t *testing.T) {
	names := realKernelNames(t)
	top := names[:5]
	expr := ncu.KernelRegex(top)
	require.True(t, strings.HasPrefix(expr, "regex:^(?:"), expr)
	re := regexp.MustCompile(strings.TrimPrefix(expr, "regex:"))

	for _, n := range top {
		assert.True(t, re.MatchString(n), "must match %q", n)
	}
	for _, n := range names[5:] {
		assert.False(t, re.MatchString(n), "must not match %q", n)
	}
	for _, n := range top {
		// near misses: a prefix, an extension, a changed template argument
		assert.False(t, re.MatchString(n[:len(n)-1]), "prefix of %q", n)
		assert.False(t, re.MatchString(n+"x"), "extension of %q", n)
		assert.False(t, re.MatchString("x"+n), "extension of %q", n)
		if c := strings.Replace(n, "<", "[", 1); c != n {
			assert.False(t, re.MatchString(c), "changed %q", n)
		}
		// a '.' in place of one character would match an unquoted regex
		assert.False(t, re.MatchString(n[:1]+"."+n[2:]) && n[1] != '.', "dot in %q", n)
	}

	// every name of the export, each matched by its own regex only
	for _, n := range names {
		one := regexp.MustCompile(strings.TrimPrefix(ncu.KernelRegex([]string{n}), "regex:"))
		for _, m := range names {
			assert.Equal(t, n == m, one.MatchString(m), "regex of %q against %q", n, m)
		}
	}

	assert.Equal(t, `regex:^(?:a\.b|c\(\)\[\]\{\}\*\+\?\|\^\$\\)$`, ncu.KernelRegex([]string{"a.b", `c()[]{}*+?|^$\`, "a.b"}))
	assert.Equal(t, "", ncu.KernelRegex(nil))
}

// TestMangledFunctionRegex: SYNTHETIC mangled names, written by hand after
// the Itanium C++ ABI (no ncu export prints mangled names), for kernels of
// the recorded runs.
func TestMangledFunctionRegex(t *testing.T) {
	re := ncu.MangledFunctionRegex([]string{"vectorized_elementwise_kernel", "Kernel2", "nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN", "Kernel2"})
	require.True(t, strings.HasPrefix(re, "regex:"))
	m := regexp.MustCompile(strings.TrimPrefix(re, "regex:"))
	for name, want := range map[string]bool{
		"_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_17CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3EEEEviT0_T1_":                        true,
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_": true,
		"_ZN7cutlass7Kernel2I36cutlass_80_simt_sgemm_128x32_8x5_nn_align1EEvNT_6ParamsE":                                                            true,
		"nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNN":                 true,
		"nvjet_sm90_tst_8x64_64x16_4x1_v_bz_TNNx":                false, // another extern "C" kernel
		"_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_xEEvi": false, // another function
		"_ZN2at6native129vectorized_elementwise_kernelILi8EEEvi": false, // a longer name's length prefix
		"_ZN2at6native30vectorized_elementwise_kernelsILi8EEEvi": false,
	} {
		assert.Equal(t, want, m.MatchString(name), name)
	}
	assert.Equal(t, "", ncu.MangledFunctionRegex(nil))
}

// TestKernelInvocation: one --kernel-id for the n-th launch of each name,
// its name field a regular expression that matches the names exactly; a
// name holding ':' (a demangled one) cannot be a field of it.
func TestKernelInvocation(t *testing.T) {
	names := []string{"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_", "flash_fwd.kernel$1", "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_"}
	id, err := ncu.KernelInvocation(names, 109)
	require.NoError(t, err)
	fields := strings.Split(id, ":")
	require.Len(t, fields, 5, "context:stream:regex:name:invocation")
	assert.Equal(t, []string{"", "", "regex"}, fields[:3])
	assert.Equal(t, "109", fields[4])
	re := regexp.MustCompile(fields[3])
	for _, n := range names {
		assert.True(t, re.MatchString(n), n)
		assert.False(t, re.MatchString(n+"x"), "extension of %q", n)
		assert.False(t, re.MatchString(n[1:]), "part of %q", n)
	}
	assert.False(t, re.MatchString("flash_fwdxkernel$1"), "the '.' is quoted")
	assert.Equal(t, 2, strings.Count(fields[3], "|")+1, "a repeated name once")

	_, err = ncu.KernelInvocation(realKernelNames(t)[:2], 1)
	assert.ErrorContains(t, err, "holds ':', which ends the name in --kernel-id")
	_, err = ncu.KernelInvocation(names, 0)
	assert.ErrorContains(t, err, "an invocation from 1")
}
