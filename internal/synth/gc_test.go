package synth

import "testing"

// TestBenchmarking: the arguments go test passes for -bench (and the
// binary's own spellings) are told from those of a plain test run.
func TestBenchmarking(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.count=1"}, false},
		{[]string{"-test.run=^$", "-test.bench=LongRun", "-test.benchtime=3x"}, true},
		{[]string{"-test.benchmem", "-test.benchtime=3x"}, false},
		{[]string{"--test.bench=."}, true},
		{[]string{"-test.bench", "Rebuild"}, true},
		{[]string{"-test.bench="}, false},
		{nil, false},
	} {
		if got := benchmarking(c.args); got != c.want {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}
