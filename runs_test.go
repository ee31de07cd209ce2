package deepprof_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// TestRecordedRunsRebuild takes each run directory recorded on a GPU
// (fixtures/runs, see fixtures/README.md), copies it without its derived
// files, rebuilds them from the raw exports with the run's own
// config.yaml, and requires every one to come back byte for byte (a gzip
// file's content: sameGzipContent).
func TestRecordedRunsRebuild(t *testing.T) {
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	require.NotEmpty(t, runs)
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			dst := rebuiltCopy(t, src)

			n := 0
			require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				rel, _ := filepath.Rel(src, p)
				if d.IsDir() || !rundir.IsDerived(rel) {
					return nil
				}
				want, err := os.ReadFile(p)
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dst, rel))
				require.NoError(t, err, rel)
				if strings.HasSuffix(rel, ".gz") && !bytes.Equal(want, got) {
					// What is compared is the content: the compression
					// level (render.TraceGzipLevel) may change. The same
					// bytes are the same content; else the rebuilt file is
					// read and the two trailers compared, and only on a
					// difference are both read whole, to say where.
					if sameGzipContent(t, want, got, rel) {
						want = got
					} else {
						want, got = gunzip(t, want, rel), gunzip(t, got, rel)
					}
				}
				if !bytes.Equal(want, got) {
					// Not assert.Equal: its diff of two large files (a
					// trace of megabytes) takes minutes.
					i := 0
					for i < len(want) && i < len(got) && want[i] == got[i] {
						i++
					}
					t.Errorf("%s: differs from the recording's at byte %d of %d (rebuilt: %d): %q against %q", rel, i, len(want), len(got),
						want[i:min(len(want), i+80)], got[i:min(len(got), i+80)])
				}
				n++
				return nil
			}))
			assert.GreaterOrEqual(t, n, 14, "derived files compared")
		})
	}
}

// sameGzipContent reports whether the rebuilt gzip file holds the bytes
// the recorded one does: the rebuilt file is one gzip member, read to its
// end (which checks its content against its trailer) with nothing after
// it, and the CRC-32 and length of the content in the two trailers are
// equal. A trailer covers the whole file where it is one member: render's
// TestTraceReadsAsKineto requires each recorded trace to be one, reads it
// whole and checks its trailer. A file cut short is never the same.
func sameGzipContent(t *testing.T, recorded, rebuilt []byte, name string) bool {
	t.Helper()
	if len(recorded) < 8 || len(rebuilt) < 8 {
		return false
	}
	br := bufio.NewReader(bytes.NewReader(rebuilt)) // a flate.Reader: the gzip reader reads no further than its member
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Logf("%s: the rebuilt file: %v", name, err)
		return false
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Logf("%s: the rebuilt file: %v", name, err)
		return false
	}
	if n, _ := io.Copy(io.Discard, br); n > 0 {
		t.Logf("%s: the rebuilt file: %d bytes after its gzip member", name, n)
		return false
	}
	return bytes.Equal(recorded[len(recorded)-8:], rebuilt[len(rebuilt)-8:])
}

// gzipped is b compressed.
func gzipped(b []byte) []byte {
	return gzippedLevel(b, gzip.DefaultCompression)
}

func gzippedLevel(b []byte, level int) []byte {
	var w bytes.Buffer
	z, _ := gzip.NewWriterLevel(&w, level)
	z.Write(b)
	z.Close()
	return w.Bytes()
}

// TestSameGzipContent: the comparison of recorded and rebuilt gzip files
// (SYNTHETIC data) tells a stream cut short (either one), one byte shorter,
// one byte other, and a rebuilt file that is no gzip file, is written
// twice, holds half a member before the whole or is damaged in its middle,
// from the same content, at a block boundary and at another compression
// level too.
func TestSameGzipContent(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("abcdefghij"), 100000)
	a, b := gzipped(data), gzipped(data)
	if !sameGzipContent(t, a, b, "x") {
		t.Fatal("same")
	}
	if sameGzipContent(t, a, a[:len(a)-6], "x") {
		t.Fatal("truncated accepted")
	}
	if sameGzipContent(t, a, gzipped(data[:len(data)-1]), "x") {
		t.Fatal("shorter accepted")
	}
	if !sameGzipContent(t, gzipped(data[:256<<10]), gzipped(data[:256<<10]), "x") {
		t.Fatal("block multiple")
	}
	if !sameGzipContent(t, a, gzippedLevel(data, gzip.BestSpeed), "x") {
		t.Fatal("another compression level")
	}
	other := bytes.Clone(data)
	other[len(other)/2] = 'z'
	if sameGzipContent(t, a, gzipped(other), "x") {
		t.Fatal("one byte other accepted")
	}
	if sameGzipContent(t, a[:len(a)-6], b, "x") {
		t.Fatal("recorded cut short accepted")
	}
	if sameGzipContent(t, a[:7], b, "x") || sameGzipContent(t, nil, b, "x") {
		t.Fatal("a recorded file shorter than a trailer accepted")
	}
	if sameGzipContent(t, a, append([]byte("not gzip"), a[len(a)-8:]...), "x") {
		t.Fatal("a rebuilt file that is no gzip file accepted")
	}
	if sameGzipContent(t, a, append(bytes.Clone(a), a...), "x") {
		t.Fatal("a rebuilt file written twice accepted")
	}
	if sameGzipContent(t, a, append(bytes.Clone(a[:len(a)/2]), a...), "x") {
		t.Fatal("a rebuilt file of half a member, then the whole, accepted")
	}
	flipped := bytes.Clone(a)
	flipped[len(flipped)/2] ^= 0xff
	if sameGzipContent(t, a, flipped, "x") {
		t.Fatal("a rebuilt file damaged in its middle accepted")
	}
}

func gunzip(t *testing.T, b []byte, name string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err, name)
	out, err := io.ReadAll(zr)
	require.NoError(t, err, name)
	return out
}

// TestRecordedRunsLinksResolve: every link in every Markdown file of each
// recorded run (report.md, the stakeholder summary, the region reports...)
// points at a file that is there: the manifest lists what a copy of a run
// does not keep as absent, never as a link.
func TestRecordedRunsLinksResolve(t *testing.T) {
	t.Parallel()
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			n := 0
			require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.IsDir() || filepath.Ext(p) != ".md" {
					return nil
				}
				for _, dest := range markdownLinks(t, mustRead(t, p)) {
					n++
					assert.FileExists(t, filepath.Join(filepath.Dir(p), filepath.FromSlash(dest)), "a link in %s", p)
				}
				return nil
			}))
			assert.Greater(t, n, 20, "links checked")

			var m rundir.Manifest
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.ManifestJSON)), &m))
			for _, a := range m.Artifacts {
				if a.Present() {
					assert.FileExists(t, filepath.Join(src, filepath.FromSlash(a.File())), "the manifest calls %s %s", a.Path, a.Status)
				}
			}
			if rs := rundir.Ranks(src); len(rs) > 0 {
				// A multi-GPU run: a deep pass per rank, whose reports are
				// not kept either.
				for _, r := range rs {
					a, ok := m.Find(rundir.RankPath(r, rundir.NcuDeepReport))
					if !ok {
						// killed during it (the first 2-GPU run): partial, and says so
						assert.Equal(t, rundir.StatusPartial, m.Status)
						assert.Contains(t, m.Reason, "ncu-deep")
						continue
					}
					assert.Equal(t, rundir.StatusAbsent, a.Status, "recorded runs do not keep the deep pass's report")
				}
				return
			}
			a, ok := m.Find(rundir.NcuDeepReport)
			if !ok || a.Status == rundir.StatusMissing {
				// A run whose deep pass never wrote a report (the 2-GPU run,
				// killed during it; a program killed before it; a deep pass
				// stopped at its deadline) is partial and says why.
				assert.Equal(t, rundir.StatusPartial, m.Status)
				if filepath.Base(src) == "h200-killed-sigkill" {
					assert.Contains(t, m.Reason, "killed by SIGKILL")
				} else {
					assert.Contains(t, m.Reason, "ncu-deep")
				}
				return
			}
			if a.Status == rundir.StatusSkipped {
				// The deep metrics were measured in the recorded run
				// (ncu.deep_source=library): no ncu pass ran.
				assert.Contains(t, a.Reason, "measured in the recorded run")
				return
			}
			assert.Equal(t, rundir.StatusAbsent, a.Status, "recorded runs do not keep the deep pass's report")
		})
	}
}

// markdownLinks returns the destination of every link in a Markdown text.
func markdownLinks(t *testing.T, src []byte) []string {
	t.Helper()
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var out []string
	require.NoError(t, ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if l, ok := n.(*ast.Link); ok && entering {
			out = append(out, string(l.Destination))
		}
		return ast.WalkContinue, nil
	}))
	return out
}

// TestRecordedRunsRegionsAgree: the region report at ncu/regions/ is the
// run's totals, the same as the summary's region table: same regions, same
// totals, launches and shares.
func TestRecordedRunsRegionsAgree(t *testing.T) {
	t.Parallel()
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			var rep facts.RegionReport
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.RegionsJSON)), &rep))
			var s facts.Summary
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.SummaryJSON)), &s))
			require.False(t, s.Regions.Sampled, "the recorded runs have a timeline of every launch")
			assert.Contains(t, []string{rundir.NcuTimingRaw, rundir.TimelineCupti}, rep.Source)
			assert.Empty(t, rep.Sample)
			assert.Equal(t, s.Regions.Source, rep.Source)
			assert.Equal(t, s.Regions.TotalMS, rep.ProfiledMS)
			assert.Equal(t, s.Regions.Outside, rep.OutsideMS)
			require.Len(t, rep.Aggregate, len(s.Regions.Rows))
			for i, r := range s.Regions.Rows {
				g := rep.Aggregate[i]
				assert.Equal(t, r.Name, g.Name)
				assert.Equal(t, r.TotalMS, g.TotalMS, r.Name)
				assert.Equal(t, r.Launches, g.KernelCount, r.Name)
				assert.InDelta(t, r.Share, g.Share, 1e-12, r.Name)
			}

			// The deep pass's sample is beside it, and says so first; a run
			// with no deep-pass export has none, and its manifest says why.
			if _, err := os.Stat(filepath.Join(src, rundir.RegionsSampleMD)); err != nil {
				var m rundir.Manifest
				require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.ManifestJSON)), &m))
				a, ok := m.Find(rundir.RegionsSampleMD)
				require.True(t, ok)
				assert.Equal(t, rundir.StatusMissing, a.Status)
				assert.Contains(t, a.Reason, "no deep-pass export")
				return
			}
			md := string(mustRead(t, filepath.Join(src, rundir.RegionsSampleMD)))
			assert.True(t, strings.HasPrefix(md, "# NVTX regions of a sample of launches, not the run's totals\n"), md[:80])
			var sample facts.RegionReport
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(src, rundir.RegionsSampleJSON)), &sample))
			assert.Equal(t, rundir.NcuRaw, sample.Source)
			assert.NotEmpty(t, sample.Sample)
			assert.Less(t, sample.Launches, rep.Launches, "a sample")
		})
	}
}

// TestRecordedCUPTIRunsAgreeWithOracle redoes, offline, each recorded CUPTI
// run's check against torch.profiler (issue 13): the run's own kernel table
// and regions, made from its CUPTI records by the rebuild, against the
// figures torch.profiler wrote in a separate plain run of the same
// workload. Phases within 3 %, the top 5 kernels within 5 %, launches equal.
func TestRecordedCUPTIRunsAgreeWithOracle(t *testing.T) {
	t.Parallel()
	runs, err := filepath.Glob("fixtures/runs/cupti-*")
	require.NoError(t, err)
	require.NotEmpty(t, runs, "recorded CUPTI runs")
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dst := rebuiltCopy(t, src) // its oracle-check.json made again, from the records and the oracle's figures
			run, err := rundir.Open(dst)
			require.NoError(t, err)

			var c render.OracleCheck
			b, err := os.ReadFile(filepath.Join(dst, rundir.OracleCheckJSON))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &c))
			require.Len(t, c.Rows, 2+5, "two phases and the top 5 kernels")
			for _, r := range c.Rows {
				assert.True(t, r.OK, "%s: oracle %.3f ms (%d), timeline %.3f ms (%d): %s", r.What, r.OracleMS, r.OracleLaunches, r.TimedMS, r.TimedLaunches, r.Why)
				assert.Equal(t, r.OracleLaunches, r.TimedLaunches, r.What)
			}
			assert.True(t, c.Passed)
			m := run.Manifest()
			require.NotNil(t, m.Sources)
			assert.Equal(t, rundir.TimelineCupti, m.Sources.Kernels.Path)
		})
	}
}
