package kernels

import (
	"strings"
	"testing"
)

// Issue 16, item 7: report.categories specs under arbitrary input: no
// panic; what parses writes back (name=pattern) to the same table, and
// classifies a kernel name the same way.
func FuzzParse(f *testing.F) {
	f.Add(strings.Join(DefaultSpecs(), "\n"), "ncclDevKernel_AllReduce_Sum_bf16_RING_LL")
	f.Add("gemm=(?i)gemm\n=x\nbad=(", "nvjet_sm90_hsh_64x8")
	f.Add("s=(?i)s|k", "\u017f\u212a")
	f.Add("a=(?i)a(b|c)+d{2,}|x?\n\b=\\bADD_kernel\\b", "ABCDD add_KERNEL ADD_kernel")
	f.Fuzz(func(t *testing.T, specs, kernel string) {
		c, err := Parse(strings.Split(specs, "\n"))
		if err != nil {
			return
		}
		var again []string
		for _, cat := range c {
			again = append(again, cat.Name+"="+cat.Pattern.String())
		}
		c2, err := Parse(again)
		if err != nil {
			t.Fatalf("the table written back does not parse: %v", err)
		}
		if c.Of(kernel) != c2.Of(kernel) {
			t.Fatalf("%q: %q, written back %q", kernel, c.Of(kernel), c2.Of(kernel))
		}
		if got, want := c.Of(kernel), byRegexpOnly(c, kernel); got != want {
			t.Fatalf("%q: %q, by the patterns alone %q", kernel, got, want)
		}
	})
}
