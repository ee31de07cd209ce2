package synth

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// RankRuns makes n SYNTHETIC node run directories under dst (node0 ...
// node<n-1>), each holding one rank of a multi-node session, from recorded
// files: node r gets the CUPTI record file records[r mod len] of the
// recorded run src (one rank's) with the process id 100000+r and device r,
// and as rank r's deep pass the ncu exports (raw and details pages) of the
// run directory deep. Node 0 also gets src's stage 1 and provenance; every
// node gets config.yaml, as each node's session writes one. It returns the
// directories, in rank order. What it writes is never a fixture.
func RankRuns(src string, records []string, deep, dst string, n int) ([]string, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("synth: no CUPTI record files to replicate")
	}
	var dirs []string
	for r := range n {
		run, err := rundir.Create(dst, "node"+strconv.Itoa(r), time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return nil, err
		}
		dir := run.Dir
		dirs = append(dirs, dir)
		if err := copyTree(src, dir, r == 0); err != nil {
			return nil, err
		}
		in := filepath.Join(src, filepath.FromSlash(rundir.TimelineCupti), records[r%len(records)])
		out := filepath.Join(dir, filepath.FromSlash(rundir.TimelineCupti), fmt.Sprintf("cupti-%d.tsv", 100000+r))
		if err := rewriteRecords(in, out, 100000+int64(r), uint32(r)); err != nil {
			return nil, err
		}
		if err := copyDeep(deep, dir, strconv.Itoa(r)); err != nil {
			return nil, err
		}
		// Each node's session ends by writing its manifest.
		run.Note("SYNTHETIC: made by internal/synth.RankRuns from %s (rank %d of %d)", filepath.Base(src), r, n)
		if err := run.WriteManifest(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)); err != nil {
			return nil, err
		}
	}
	return dirs, nil
}

// copyTree copies what a node's session writes besides its records and
// deep pass: config.yaml always; with first, the provenance and stage 1.
func copyTree(src, dir string, first bool) error {
	rels := []string{rundir.ConfigYAML}
	if first {
		rels = append(rels, rundir.InputsYAML, rundir.EnvJSON, rundir.Stage1Report, rundir.Stage1Log, rundir.TimelineReport)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(rundir.TimelineCupti)), 0o755); err != nil {
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

// NodeRuns writes, under dst, the run directories of a SYNTHETIC run of
// nodes nodes with perNode ranks each, as each node's session writes them:
// rank r (global; local rank l on its node) has as its records those of the
// recorded run src (one rank's, the files records in turn), with process id
// 4200+l and device l on every node, so that the nodes' processes share
// ids and device ordinals, and a header naming the node (host "synth-host",
// node n, rank r, local rank l) with a device note giving each rank its own
// GPU UUID, listed in the node's manifest as its session lists what it
// recorded; and as its deep pass the ncu exports of the run directory deep.
// Node 0 also gets src's stage 1 and provenance. It returns the
// directories, in node order. What it writes is never a fixture.
func NodeRuns(src string, records []string, deep, dst string, nodes, perNode int) ([]string, error) {
	if len(records) == 0 {
		return nil, fmt.Errorf("synth: no CUPTI record files to replicate")
	}
	var dirs []string
	for n := range nodes {
		run, err := rundir.Create(dst, "node"+strconv.Itoa(n), time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, run.Dir)
		if err := copyTree(src, run.Dir, n == 0); err != nil {
			return nil, err
		}
		for l := range perNode {
			r := n*perNode + l
			pid := 4200 + int64(l)
			in := filepath.Join(src, filepath.FromSlash(rundir.TimelineCupti), records[r%len(records)])
			out := filepath.Join(run.Dir, filepath.FromSlash(rundir.TimelineCupti), fmt.Sprintf("cupti-%d.tsv", pid))
			id := []cupti.KeyValue{{Key: cupti.KeyHost, Value: "synth-host"}, {Key: cupti.KeyNode, Value: strconv.Itoa(n)},
				{Key: cupti.KeyRank, Value: strconv.Itoa(r)}, {Key: cupti.KeyLocalRank, Value: strconv.Itoa(l)}}
			uuid := fmt.Sprintf("GPU-00000000-0000-4000-8000-%012d", r)
			if err := rewrite(in, out, pid, uint32(l), id, &cupti.Note{Key: cupti.DeviceNote(uint32(l), uuid).Key, Value: uuid}); err != nil {
				return nil, err
			}
			run.Record(path.Join(rundir.TimelineCupti, filepath.Base(out)), rundir.StatusComplete, "")
			if err := copyDeep(deep, run.Dir, strconv.Itoa(r)); err != nil {
				return nil, err
			}
		}
		run.Note("SYNTHETIC: made by internal/synth.NodeRuns from %s (node %d of %d, %d ranks each)", filepath.Base(src), n, nodes, perNode)
		if err := run.WriteManifest(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)); err != nil {
			return nil, err
		}
	}
	return dirs, nil
}

// copyDeep copies the deep-pass exports of the run directory deep as rank
// rank's of the run directory dir.
func copyDeep(deep, dir, rank string) error {
	for _, rel := range []string{rundir.NcuRaw, rundir.NcuDetails} {
		for _, ext := range []string{"", ".gz"} {
			from := filepath.Join(deep, filepath.FromSlash(rel)+ext)
			if _, err := os.Stat(from); err != nil {
				continue
			}
			if err := copyFile(from, filepath.Join(dir, filepath.FromSlash(rundir.RankPath(rank, rel)+ext))); err != nil {
				return err
			}
		}
	}
	return nil
}

// rewriteRecords copies a CUPTI record file with its process id and every
// GPU record's device replaced.
func rewriteRecords(in, out string, pid int64, device uint32) error {
	return rewrite(in, out, pid, device, nil, nil)
}

// rewrite copies a CUPTI record file with its process id and every GPU
// record's device replaced, the header's further fields set to extra (nil:
// kept) and, when note is not nil, that note after the header.
func rewrite(in, out string, pid int64, device uint32, extra []cupti.KeyValue, note *cupti.Note) error {
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
			if extra != nil {
				rec.Extra = extra
			}
			if note != nil {
				if err := w.Write(rec); err != nil {
					g.Close()
					return err
				}
				if err := w.Write(note); err != nil {
					g.Close()
					return err
				}
				continue
			}
		case *cupti.End:
			if note != nil {
				rec.Records++ // the note is a record of the file's
			}
		case *cupti.KernelRecord:
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
