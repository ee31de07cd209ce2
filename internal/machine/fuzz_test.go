package machine_test

import (
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// Issue 16, item 7: tool version output under arbitrary input: no panic,
// no negative number, and a version that parses prints as one that parses
// to the same numbers.
func FuzzParseVersion(f *testing.F) {
	f.Add(ncu2025)
	f.Add("NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0\n")
	f.Add("Version 99999999999999999999.1\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, p := range []struct {
			parse  func(string) (machine.Version, error)
			prefix string
		}{{machine.ParseNcuVersion, "Version "}, {machine.ParseNsysVersion, "NVIDIA Nsight Systems version "}} {
			v, err := p.parse(out)
			if err != nil {
				continue
			}
			if v.Major < 0 || v.Minor < 0 || v.Patch < 0 || v.Build < 0 {
				t.Fatalf("%q: negative version %v", out, v)
			}
			back, err := p.parse(p.prefix + v.String() + "\n")
			if err != nil || back.Major != v.Major || back.Minor != v.Minor || back.Patch != v.Patch || back.Build != v.Build {
				t.Fatalf("%q: %v prints as %q, which reads %v (%v)", out, v, v.String(), back, err)
			}
		}
	})
}
