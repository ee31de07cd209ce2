package synth

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness/artifacts"
	"github.com/llm-perf-opt/deepprof/harness/cupti"
)

// RankRuns makes n SYNTHETIC node run directories under dst (node0 ...
// node<n-1>), each holding one rank of a multi-node session, from a
// recorded multi-rank run directory src (its ranks' CUPTI record files and
// ncu/ranks/rank<R>/ exports): node r gets recorded rank r mod m's records
// with the process id 100000+r and device r, and that rank's deep-pass
// exports as rank r's. Node 0 also gets stage 1 and the provenance; every
// node gets config.yaml, as each node's session writes one. It returns the
// directories, in rank order. What it writes is never a fixture.
func RankRuns(src, dst string, n int) ([]string, error) {
	recs, err := filepath.Glob(filepath.Join(src, filepath.FromSlash(artifacts.TimelineCupti), "cupti-*.tsv*"))
	if err != nil || len(recs) == 0 {
		return nil, fmt.Errorf("synth: %s: no CUPTI record files", src)
	}
	var dirs []string
	for r := range n {
		dir := filepath.Join(dst, "node"+strconv.Itoa(r))
		dirs = append(dirs, dir)
		from := r % len(recs)
		if err := copyTree(src, dir, r == 0); err != nil {
			return nil, err
		}
		out := filepath.Join(dir, filepath.FromSlash(artifacts.TimelineCupti), fmt.Sprintf("cupti-%d.tsv", 100000+r))
		if err := rewriteRecords(recs[from], out, 100000+int64(r), uint32(r)); err != nil {
			return nil, err
		}
		for _, rel := range []string{artifacts.NcuRaw, artifacts.NcuDetails} {
			for _, ext := range []string{"", ".gz"} {
				in := filepath.Join(src, filepath.FromSlash(artifacts.RankPath(strconv.Itoa(from%rankCount(src)), rel)+ext))
				if _, err := os.Stat(in); err != nil {
					continue
				}
				if err := copyFile(in, filepath.Join(dir, filepath.FromSlash(artifacts.RankPath(strconv.Itoa(r), rel)+ext))); err != nil {
					return nil, err
				}
			}
		}
	}
	return dirs, nil
}

// rankCount is how many ranks' folders src has (at least 1).
func rankCount(src string) int {
	m, _ := filepath.Glob(filepath.Join(src, filepath.FromSlash(artifacts.NcuRanks), "rank*"))
	return max(len(m), 1)
}

// copyTree copies what a node's session writes besides its records and
// deep pass: config.yaml always; with first, the provenance and stage 1.
func copyTree(src, dir string, first bool) error {
	rels := []string{artifacts.ConfigYAML}
	if first {
		rels = append(rels, artifacts.InputsYAML, artifacts.EnvJSON, artifacts.Stage1Report, artifacts.Stage1Log, artifacts.TimelineReport)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(artifacts.TimelineCupti)), 0o755); err != nil {
		return err
	}
	for _, rel := range rels {
		for _, ext := range []string{"", ".gz"} {
			in := filepath.Join(src, filepath.FromSlash(rel)+ext)
			if _, err := os.Stat(in); err != nil {
				continue
			}
			if err := copyFile(in, filepath.Join(dir, filepath.FromSlash(rel)+ext)); err != nil {
				return err
			}
		}
	}
	return nil
}

func copyFile(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	g, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(g, f); err != nil {
		g.Close()
		return err
	}
	return g.Close()
}

// rewriteRecords copies a CUPTI record file with its process id and every
// GPU record's device replaced.
func rewriteRecords(in, out string, pid int64, device uint32) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(in, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		r = zr
	}
	g, err := os.Create(out)
	if err != nil {
		return err
	}
	w := cupti.NewWriter(g)
	cr := cupti.NewReader(r, in)
	for cr.Scan() {
		switch rec := cr.Record().(type) {
		case *cupti.SyntaxError:
			g.Close()
			return rec
		case *cupti.Header:
			rec.PID = pid
		case *cupti.Kernel:
			rec.Device = device
		case *cupti.Memcpy:
			rec.Device = device
		case *cupti.Memset:
			rec.Device = device
		}
		if err := w.Write(cr.Record()); err != nil {
			g.Close()
			return err
		}
	}
	if err := cr.Err(); err != nil {
		g.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		g.Close()
		return err
	}
	return g.Close()
}
