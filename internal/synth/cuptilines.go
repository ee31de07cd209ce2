// SYNTHETIC CUPTI record files written line by line, for tests that spell
// out each record (see the package documentation, "CUPTI recordings").

package synth

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Timeline builds the timeline of record files given as text.
func Timeline(t testing.TB, files ...string) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder()
	for i, f := range files {
		if err := b.Read(strings.NewReader(f), fmt.Sprintf("f%d.tsv", i)); err != nil {
			t.Fatal(err)
		}
	}
	tl, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// RecordsTimeline writes a record file for each process (by pid) with the
// given records, as the CUPTI library would, and builds the timeline of
// them.
func RecordsTimeline(t testing.TB, files map[int64][]cupti.Record) *timeline.Timeline {
	t.Helper()
	b := timeline.NewBuilder()
	for pid, rs := range files {
		var buf bytes.Buffer
		w := cupti.NewWriter(&buf)
		err := w.Write(&cupti.Header{PID: pid, PPID: 1, CUPTIAPI: 130001, CUDADriver: 13000, StartNS: 1, Exe: "/usr/bin/python3"})
		for _, r := range rs {
			if err == nil {
				err = w.Write(r)
			}
		}
		if err == nil {
			err = w.Flush()
		}
		if err == nil {
			err = b.Read(&buf, fmt.Sprintf("cupti-%d.tsv", pid))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	tl, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// HeaderLine is a record file's header line for process pid.
func HeaderLine(pid int) string {
	return fmt.Sprintf("#deepprof-cupti/1\tpid=%d\tppid=1\tcupti_api=1\tcuda_driver=2\tstart_ns=1000\texe=/usr/bin/prog\n", pid)
}

// KernelLine is a kernel record: start, end, device, stream, correlation,
// name.
func KernelLine(start, end, dev, stream, corr int, name string) string {
	return fmt.Sprintf("K\t%d\t%d\t%d\t1\t%d\t%d\t1,1,1\t32,1,1\t8\t0\t0\t_Z%s\t%s\n", start, end, dev, stream, corr, name, name)
}

// LaunchLine is a cudaLaunchKernel call of 5 ns on thread tid.
func LaunchLine(start, tid, corr int) string {
	return fmt.Sprintf("A\t%d\t%d\t%d\t%d\truntime\t211\tcudaLaunchKernel\n", start, start+5, tid, corr)
}

// NVTXLine is an NVTX event: kind (push, pop, start, end), time, thread,
// domain, name.
func NVTXLine(kind string, ts, tid int, domain, name string) string {
	return fmt.Sprintf("N\t%s\t%d\t%d\t0\t%s\t%s\n", kind, ts, tid, domain, name)
}
