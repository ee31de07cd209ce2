package deepprof_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/harness"
	"github.com/llm-perf-opt/deepprof/internal/render"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/summary"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// gfmTables parses Markdown as GitHub does and returns each table's body
// row count, keyed by the heading it is under ("" before any), in order.
func gfmTables(t *testing.T, src []byte) map[string][]int {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))
	out := map[string][]int{}
	heading := ""
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Heading:
			heading = string(n.Lines().Value(src))
		case *extast.Table:
			rows := 0
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if _, ok := c.(*extast.TableRow); ok {
					rows++
				}
			}
			out[heading] = append(out[heading], rows)
		}
	}
	return out
}

// h2s are the second-level headings of Markdown, in order.
func h2s(src []byte) []string {
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var out []string
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 2 {
			out = append(out, string(h.Lines().Value(src)))
		}
	}
	return out
}

// TestRecordedRunsMarkdown rebuilds each recorded run, renders every
// Markdown file of it with a GFM renderer, and finds the tables the typed
// data says it must hold, with their row counts.
func TestRecordedRunsMarkdown(t *testing.T) {
	runs, err := filepath.Glob("fixtures/runs/*")
	require.NoError(t, err)
	for _, src := range runs {
		t.Run(filepath.Base(src), func(t *testing.T) {
			t.Parallel()
			dst := rebuiltCopy(t, src)
			var s facts.Summary
			require.NoError(t, json.Unmarshal(mustRead(t, filepath.Join(dst, rundir.SummaryJSON)), &s))

			tabs := gfmTables(t, mustRead(t, filepath.Join(dst, rundir.StakeholderSummary)))
			// Stages that are a prefill or a decode (phases.*): the
			// Aggregates table's rows and the prefill-vs-decode chart's
			// bars (a program's own NVTX ranges may be neither).
			phases := 0
			topLevel, subs, perProcess, perRank := 0, 0, 0, 0
			for _, r := range s.Stages.Rows {
				if r.Phase != "" {
					phases++
				}
				perProcess += len(r.Processes)
				perRank += len(r.Ranks)
				if r.Parent == "" {
					topLevel++
				} else {
					subs++
				}
			}
			stageTables := []int{topLevel}
			if subs > 0 {
				stageTables = append(stageTables, subs)
			}
			if perProcess > 0 {
				stageTables = append(stageTables, perProcess)
			}
			if perRank > 0 {
				stageTables = append(stageTables, perRank)
			}
			if s.Phases.Missing != "" && len(s.Narrative.GPUBusy) > 0 {
				stageTables = append(stageTables, len(s.Narrative.GPUBusy))
			}
			want := map[string][]int{
				"Environment":          {len(tabs["Environment"][0:1])}, // one table, any length: checked below
				"Stages":               stageTables,
				"MFU":                  {len(s.MFU.Rows)},
				"Top Operators":        {len(s.Operators.Rows)},
				"Top Kernels":          {len(s.Kernels.Rows), len(s.Kernels.ByCategory)},
				"Per-Region Breakdown": {len(s.Regions.Rows) + 1}, // + the row of launches outside every range
			}
			if n := len(render.RuleRows(s.Kernels)); n > 0 {
				want["ncu's rules on the top kernels"] = []int{n}
			}
			if s.MFU.Missing != "" {
				delete(want, "MFU")
			}
			if s.Stages.Missing != "" {
				delete(want, "Stages")
			}
			if s.Regions.Missing != "" {
				delete(want, "Per-Region Breakdown")
			}
			if s.Phases.Missing == "" {
				want["GPU busy and idle per phase"] = []int{len(s.Phases.Rows)}
			}
			if s.Operators.Missing != "" {
				delete(want, "Top Operators")
			}
			assert.Equal(t, render.SectionsOf(&s), h2s(mustRead(t, filepath.Join(dst, rundir.StakeholderSummary))), "the sections, Findings first")
			if s.Communication != nil {
				want[render.CommunicationSection] = []int{len(s.Communication.Rows)}
			}
			assert.NotEmpty(t, s.Narrative.Lines, "findings")
			assert.LessOrEqual(t, len(s.Narrative.Lines), summary.MaxFindings)
			want["Environment"] = tabs["Environment"]
			for section, rows := range want {
				assert.Equal(t, rows, tabs[section], "tables under %q", section)
			}
			assert.GreaterOrEqual(t, tabs["Environment"][0], 8, "environment rows")
			if s.Stages.Source == "" && s.Stages.Missing == "" { // deepprof's own workloads
				assert.Equal(t, 10, len(s.Kernels.Rows), "the top 10 kernels")
			} else {
				assert.NotEmpty(t, s.Kernels.Rows, "a small program's few kernels")
			}
			assert.Positive(t, s.Kernels.Rows[0].TotalMS)

			// Every other Markdown file of the run renders its tables too.
			require.NoError(t, filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
				require.NoError(t, err)
				if d.IsDir() || !strings.HasSuffix(p, ".md") {
					return nil
				}
				n := 0
				for _, rows := range gfmTables(t, mustRead(t, p)) {
					n += len(rows)
				}
				rel, _ := filepath.Rel(dst, p)
				// no regions: the run has no ranges, or the deep pass's sample
				// none (its ranges inferred from the kernel stream, not opened
				// by the program: ncu saw none)
				noRegions := strings.HasPrefix(rel, "ncu/regions") && (s.Regions.Missing != "" ||
					strings.Contains(string(mustRead(t, p)), "**No region profiling took place**"))
				if (rel != rundir.OperatorsMD || s.Operators.Missing == "") && !noRegions {
					assert.Positive(t, n, "%s has a table", rel)
				}
				return nil
			}))

			// The charts: well-formed SVG with one bar or point per row.
			for rel, want := range map[string]render.Shape{
				rundir.ChartTopKernels: {Bars: min(10, len(s.Kernels.Rows))},
				rundir.ChartCategories: {Bars: len(s.Kernels.ByCategory)},
				rundir.ChartStages:     {Bars: phases + len(s.Narrative.GPUBusy)}, // wall time, and kernel time beside it
			} {
				if want == (render.Shape{}) {
					continue // not drawn
				}
				got, err := render.Inspect(mustRead(t, filepath.Join(dst, rel)))
				require.NoError(t, err, rel)
				assert.Equal(t, want, got, rel)
			}
			if len(s.Kernels.Roofline) > 0 {
				got, err := render.Inspect(mustRead(t, filepath.Join(dst, rundir.ChartRoofline)))
				require.NoError(t, err)
				assert.Equal(t, render.Shape{Points: len(s.Kernels.Roofline)}, got)
			} else {
				assert.NoFileExists(t, filepath.Join(dst, rundir.ChartRoofline))
			}
		})
	}
}

// rebuiltCopy copies a recorded run without its derived files and
// rebuilds them from its raw exports (once a run: see rebuilt).
func rebuiltCopy(t *testing.T, src string) string {
	t.Helper()
	rebuilt.Lock()
	if rebuilt.runs == nil {
		rebuilt.runs = map[string]*rebuiltRun{}
	}
	r := rebuilt.runs[src]
	if r == nil {
		r = &rebuiltRun{}
		rebuilt.runs[src] = r
	}
	rebuilt.Unlock()
	r.once.Do(func() {
		root, err := rebuiltRoot()
		if err != nil {
			r.err = err
			return
		}
		r.dir = filepath.Join(root, strings.ReplaceAll(filepath.ToSlash(src), "/", "_"), filepath.Base(src))
		if r.err = synth.RawCopy(r.dir, src); r.err != nil {
			return
		}
		_, r.err = harness.Report(r.dir, harness.ReportOptions{})
	})
	require.NoError(t, r.err)
	return r.dir
}

// rebuilt holds one rebuilt copy of each recorded run for this package's
// tests, which only read it: each run is rebuilt once, not once a test.
var rebuilt struct {
	sync.Mutex
	root string
	runs map[string]*rebuiltRun
}

type rebuiltRun struct {
	once sync.Once
	dir  string
	err  error
}

// rebuiltRoot is the folder of the rebuilt copies, made at the first one
// and removed by TestMain.
func rebuiltRoot() (string, error) {
	rebuilt.Lock()
	defer rebuilt.Unlock()
	if rebuilt.root == "" {
		d, err := os.MkdirTemp("", "deepprof-rebuilt-")
		if err != nil {
			return "", err
		}
		rebuilt.root = d
	}
	return rebuilt.root, nil
}

func TestMain(m *testing.M) {
	synth.CollectLess()
	code := m.Run()
	if rebuilt.root != "" {
		os.RemoveAll(rebuilt.root)
	}
	os.Exit(code)
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}
