package phases

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// workDoneByWalk is workDone as it was: each launch's end marked on its
// range and every range around it.
func workDoneByWalk(p *timeline.Process) map[*timeline.Range]int64 {
	done := map[*timeline.Range]int64{}
	mark := func(r *timeline.Range, end int64) {
		for ; r != nil; r = r.Parent {
			if done[r] >= end {
				return
			}
			done[r] = end
		}
	}
	for i := range p.Kernels {
		mark(p.RangeOf(&p.Kernels[i]), p.Kernels[i].End)
	}
	for i := range p.Copies {
		mark(p.Copies[i].Range, p.Copies[i].End)
	}
	return done
}

// TestWorkDoneAsByWalk: every recorded run's processes, and a SYNTHETIC
// nesting 3,000 deep whose inner kernels end last, give the same times as
// the walk from each launch up.
func TestWorkDoneAsByWalk(t *testing.T) {
	files, err := filepath.Glob("../../fixtures/runs/*/timeline/cupti/*.tsv.gz")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	processes := 0
	for _, f := range files {
		tl, err := timeline.Load("cupti", []string{f}, func(name string) (io.ReadCloser, error) { return os.Open(name) })
		if err != nil {
			continue // a recording the timeline refuses is another test's
		}
		for _, p := range tl.Processes {
			assert.Equal(t, workDoneByWalk(p), workDone(p), f)
			processes++
		}
	}
	assert.Greater(t, processes, 20)

	tl := buildDeep(t, 3000)
	p := tl.Processes[0]
	want := workDoneByWalk(p)
	assert.Len(t, want, 3000)
	assert.Equal(t, want, workDone(p))
}

// buildDeep is a SYNTHETIC timeline of depth ranges nested on one thread,
// a kernel launched in each, the innermost ending last.
func buildDeep(t *testing.T, depth int) *timeline.Timeline {
	t.Helper()
	var b strings.Builder
	b.WriteString(cupti.Magic + "\tpid=7\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=100\texe=/bin/x\n")
	ts := int64(1000)
	records := 0
	for i := range depth {
		fmt.Fprintf(&b, "N\tpush\t%d\t1\t0\t\tr\n", ts)
		corr := i + 1
		fmt.Fprintf(&b, "A\t%d\t%d\t1\t%d\truntime\t211\tcudaLaunchKernel\n", ts+1, ts+2, corr)
		fmt.Fprintf(&b, "K\t%d\t%d\t0\t1\t7\t%d\t1,1,1\t32,1,1\t16\t0\t0\t_Z1kv\tk()\n", ts+3, ts+4+int64(i)*100, corr)
		ts += 10
		records += 3
	}
	for range depth {
		fmt.Fprintf(&b, "N\tpop\t%d\t1\t0\t\t\n", ts)
		ts += 10
		records++
	}
	fmt.Fprintf(&b, "E\t%d\t0\n", records)
	bl := timeline.NewBuilder()
	require.NoError(t, bl.Read(strings.NewReader(b.String()), "deep.tsv"))
	tl, err := bl.Build()
	require.NoError(t, err)
	return tl
}
