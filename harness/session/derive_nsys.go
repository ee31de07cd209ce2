package session

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/nsys"
	"github.com/llm-perf-opt/deepprof/harness/report"
)

// deriveNsysKernels writes kernels.md and kernels.json from nsys's kernel
// summary (cuda_gpu_kern_sum: every launch of the capture, exact totals),
// when the session's timeline came from nsys. A summary the session set
// aside (the manifest does not call it complete: it could not be read, and
// the timeline fell back to the ncu timing pass) gives way to the next
// source of timelineSources.
func deriveNsysKernels(run *artifacts.Run, topN int) error {
	if a, ok := find(run.Manifest(), nsysKernSum); ok && a.Status != artifacts.StatusComplete {
		for _, src := range timelineSources {
			if src != nsysKernSum && exists(run.Path(src)) {
				return deriveKernels(run, src, topN)
			}
		}
		return fmt.Errorf("%s is %s: %s", nsysKernSum, a.Status, a.Reason)
	}
	sums, err := readSums(run, nsysKernSum, nsys.ReadKernelSums)
	if err != nil {
		return err
	}
	tab := nsys.Table(sums, nsysKernSum).Top(topN)
	var md, js bytes.Buffer
	if err := report.KernelsMarkdown(&md, tab); err != nil {
		return err
	}
	if err := report.KernelsJSON(&js, tab); err != nil {
		return err
	}
	return errors.Join(run.Write(artifacts.KernelsMD, md.Bytes()), run.Write(artifacts.KernelsJSON, js.Bytes()))
}

// readSums reads an nsys stats CSV of the run, plain or gzipped (recorded
// runs keep large files as FILE.gz), named rel in errors.
func readSums[T any](run *artifacts.Run, rel string, read func(io.Reader, string) ([]T, error)) ([]T, error) {
	var r io.Reader
	f, err := os.Open(run.Path(rel))
	if errors.Is(err, os.ErrNotExist) {
		if f, err = os.Open(run.Path(rel) + ".gz"); err == nil {
			zr, zerr := gzip.NewReader(f)
			if zerr != nil {
				f.Close()
				return nil, fmt.Errorf("%s.gz: %w", rel, zerr)
			}
			r = zr
		}
	} else {
		r = f
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(r, rel)
}
