package deepprof_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/ncu"
	"github.com/llm-perf-opt/deepprof/internal/regions"
	"github.com/llm-perf-opt/deepprof/internal/render"
)

// regionFixtures are the recorded exports the region report is checked on:
// every one with NVTX data, the range and app-range replay exports, and one
// without NVTX (whole-application timing).
var regionFixtures = []string{
	"h200-llama-decode-basic/raw.csv",
	"h200-llama-decode-basic/details.csv.gz",
	"h200-llama-decode-full/raw.csv",
	"h200-llama-decode-full/details.csv",
	"h200-llama-decode-roofline/raw.csv",
	"h200-llama-decode-roofline/details.csv",
	"h200-workload-crash-partial/raw.csv",
	"h200-cccl-library-domain/raw.csv",
	"cuda-nvtx-domains/raw.csv",
	"cuda-nvtx-twoproc/raw.csv",
	"cuda-nvtx-kernel-replay/raw.csv",
	"cuda-range-replay/raw.csv",
	"cuda-range-replay/details.csv",
	"cuda-range-replay-nested/raw.csv",
	"cuda-range-replay-nested/details.csv",
	"cuda-app-range-replay/raw.csv",
	"h200-llama-whole-timing/raw.csv",
}

func regionReport(t *testing.T, rel string, cfg regions.Config) *facts.RegionReport {
	t.Helper()
	path := "fixtures/ncu/" + rel
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rep, err := regions.FromReader(ncu.NewReader(f, path, ncu.Options{Metrics: regions.RawMetrics(cfg.Groups)}), path, cfg)
	require.NoError(t, err)
	return rep
}

// TestRegionGoldens makes the region report of each fixture with the default
// configuration and compares report.md and report.json with
// golden/regions/. Regenerate with: go test . -run TestRegionGoldens -update
func TestRegionGoldens(t *testing.T) {
	t.Parallel()
	for _, rel := range regionFixtures {
		t.Run(rel, func(t *testing.T) {
			g := goldie.New(t, goldie.WithFixtureDir("golden/regions"), goldie.WithNameSuffix(""))
			rep := regionReport(t, rel, regions.DefaultConfig())
			var md, js bytes.Buffer
			require.NoError(t, render.RegionsMarkdown(&md, rep))
			require.NoError(t, render.RegionsJSON(&js, rep))
			g.Assert(t, rel+".report.md", md.Bytes())
			g.Assert(t, rel+".report.json", js.Bytes())
			checkRegionMarkdown(t, rep, md.Bytes())
			checkReconciles(t, rep)
		})
	}
}

// checkReconciles checks that every parent's inclusive values are its
// exclusive values plus its children's inclusive values.
func checkReconciles(t *testing.T, rep *facts.RegionReport) {
	t.Helper()
	sets := [][]facts.Region{rep.Aggregate}
	for _, s := range rep.Scopes {
		sets = append(sets, s.Regions)
	}
	for _, regs := range sets {
		for i, p := range regs {
			ms, n := p.ExclusiveMS, p.ExclusiveKernelCount
			for _, c := range regs[i+1:] {
				if c.Depth <= p.Depth {
					break
				}
				if c.Depth == p.Depth+1 {
					ms += c.TotalMS
					n += c.KernelCount
				}
			}
			assert.InDelta(t, p.TotalMS, ms, 1e-9*max(p.TotalMS, 1e-300), p.Name)
			assert.Equal(t, p.KernelCount, n, p.Name)
		}
	}
}

// checkRegionMarkdown parses report.md as GFM and checks that each region
// section (a heading of level 3 or more) carries the region's name and is
// followed by a kernel table and a metric table with one row per entry.
func checkRegionMarkdown(t *testing.T, rep *facts.RegionReport, src []byte) {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.Table))
	doc := md.Parser().Parse(text.NewReader(src))

	type section struct {
		title string
		rows  []int // body rows of each table, in order
	}
	var secs []*section
	var cur *section
	require.NoError(t, ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			cur = nil
			if n.Level >= 3 {
				cur = &section{title: inlineText(n, src)}
				secs = append(secs, cur)
			}
			return ast.WalkSkipChildren, nil
		case *extast.Table:
			rows := 0
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if _, ok := c.(*extast.TableRow); ok {
					rows++
				}
			}
			if cur != nil {
				cur.rows = append(cur.rows, rows)
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	}))

	var want []facts.Region
	if rep.AggregateEnabled && len(rep.Scopes) > 1 {
		want = append(want, rep.Aggregate...)
	}
	for _, s := range rep.Scopes {
		want = append(want, s.Regions...)
	}
	require.Len(t, secs, len(want), "one section per region")
	for i, r := range want {
		name := r.Name
		if name == "" {
			name = "(empty name)"
		}
		assert.Equal(t, name, secs[i].title)
		var rows []int
		if len(r.Kernels) > 0 {
			rows = append(rows, len(r.Kernels))
		}
		if len(r.Metrics) > 0 {
			rows = append(rows, len(r.Metrics))
		}
		assert.Equal(t, rows, secs[i].rows, "tables of region %q", r.Name)
	}
}

// inlineText is a node's text as rendered: escapes resolved.
func inlineText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(util.UnescapePunctuations(t.Segment.Value(src)))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// TestRegionsNoNVTX: an export without NVTX data completes and says plainly
// that no region profiling took place.
func TestRegionsNoNVTX(t *testing.T) {
	t.Parallel()
	rep := regionReport(t, "h200-llama-whole-timing/raw.csv", regions.DefaultConfig())
	assert.False(t, rep.RegionProfiling)
	require.Len(t, rep.Scopes, 1)
	assert.Empty(t, rep.Scopes[0].Regions)
	assert.Empty(t, rep.Aggregate)
	var md bytes.Buffer
	require.NoError(t, render.RegionsMarkdown(&md, rep))
	assert.Contains(t, md.String(), "No region profiling took place")
}

// TestRegionsLibraryDomain: CUB's ranges, pushed in domain CCCL with
// registered strings inside torch ops, are regions named by their range
// alone: no payload, colour or message-type field in a name. The launch
// counts are the stack column's distinct values counted in
// fixtures/ncu/h200-cccl-library-domain/raw.csv.
func TestRegionsLibraryDomain(t *testing.T) {
	t.Parallel()
	rep := regionReport(t, "h200-cccl-library-domain/raw.csv", regions.DefaultConfig())
	got := map[string]int64{}
	for _, r := range rep.Aggregate {
		got[r.Name] = r.KernelCount
		assert.NotContains(t, r.Name, ":none", r.Name)
	}
	assert.Equal(t, map[string]int64{
		"outer":                   64,
		"outer/inner:with:colons": 64,
		"outer/inner:with:colons/CCCL@cub::DeviceScan::InclusiveScan":     4,
		"outer/inner:with:colons/CCCL@cub::DeviceRadixSort":               14,
		"outer/inner:with:colons/CCCL@cub::DeviceSelect::Unique":          4,
		"outer/inner:with:colons/CCCL@cub::DeviceScan::InclusiveSumByKey": 8,
	}, got)
	assert.EqualValues(t, 65, rep.Launches)
	assert.EqualValues(t, 1, rep.OutsideLaunches)
	scan := rep.Aggregate[2]
	require.Equal(t, "outer/inner:with:colons/CCCL@cub::DeviceScan::InclusiveScan", scan.Name)
	assert.Equal(t, []facts.Range{{Name: "outer"}, {Name: "inner:with:colons"}, {Domain: "CCCL", Name: "cub::DeviceScan::InclusiveScan"}}, scan.Levels)
}

// TestRegionsTwoProcesses: the held-out style of input, two processes on one
// GPU with nested ranges and launches outside any range, gives one set of
// regions per process and an aggregate that sums them.
func TestRegionsTwoProcesses(t *testing.T) {
	t.Parallel()
	rep := regionReport(t, "cuda-nvtx-twoproc/raw.csv", regions.DefaultConfig())
	require.Len(t, rep.Scopes, 2)
	names := func(regs []facts.Region) []string {
		var out []string
		for _, r := range regs {
			out = append(out, r.Name)
		}
		return out
	}
	want := []string{"prefill", "prefill/layer0", "decode_all", "decode_all/decode_step"}
	assert.Equal(t, want, names(rep.Aggregate))
	for _, s := range rep.Scopes {
		assert.Equal(t, want, names(s.Regions))
		assert.EqualValues(t, 1, s.OutsideLaunches)
	}
	for i, r := range rep.Aggregate {
		a, b := rep.Scopes[0].Regions[i], rep.Scopes[1].Regions[i]
		assert.InDelta(t, a.TotalMS+b.TotalMS, r.TotalMS, 1e-12)
		assert.Equal(t, a.KernelCount+b.KernelCount, r.KernelCount)
	}
	assert.EqualValues(t, 8, rep.Aggregate[3].KernelCount, "decode_step holds 2 launches, twice, per process: 8")
}

// TestRegionsOutDir writes the regions directory of the two-process export
// and compares its file list with a golden list; every file stays inside it.
func TestRegionsOutDir(t *testing.T) {
	t.Parallel()
	rep := regionReport(t, "cuda-nvtx-twoproc/raw.csv", regions.DefaultConfig())
	dir := t.TempDir()
	require.NoError(t, harness.WriteRegionsOut(dir, rep))
	var list bytes.Buffer
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		require.True(t, rel == "." || filepath.IsLocal(rel), rel)
		if !d.IsDir() {
			list.WriteString(filepath.ToSlash(rel) + "\n")
		}
		return nil
	}))
	g := goldie.New(t, goldie.WithFixtureDir("golden/regions"), goldie.WithNameSuffix(""))
	g.Assert(t, "cuda-nvtx-twoproc/out-dir.txt", list.Bytes())
}
