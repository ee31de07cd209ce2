package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

//go:embed report.html.tmpl
var htmlTemplateText string

var htmlTemplate = template.Must(template.New("report.html").Parse(htmlTemplateText))

// markdown renders the summary's Markdown as GitHub does (GFM tables,
// heading ids). Raw HTML is kept: the summary's only raw HTML is its own
// <details> blocks, since every name from a profiled program is escaped
// in the Markdown (EscapeCell).
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	goldmark.WithRendererOptions(gmhtml.WithUnsafe()),
)

type htmlChart struct {
	Title, Path, Missing, ID string
	SVG                      template.HTML
}

// keyCharts are the charts report.html shows right after the findings,
// full width: where the GPU time goes (the top kernels) and where the wall
// time goes (prefill against decode). The others follow at the end.
var keyCharts = []string{rundir.ChartTopKernels, rundir.ChartStages}

// SummaryHTML writes report.html: one self-contained page (no network:
// its Content-Security-Policy forbids any fetch) with the stakeholder
// summary as summaryMD says it, the key charts after its findings and
// the others at its end, each drawn inline (so that its text scales with
// the page), the summary's chart links pointing at them, and tables that
// sort on a click.
func SummaryHTML(w io.Writer, runID string, summaryMD []byte, charts []Chart) error {
	var body bytes.Buffer
	if err := markdown.Convert(summaryMD, &body); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	html := body.String()
	var key, rest []htmlChart
	for _, c := range charts {
		base := strings.TrimSuffix(path.Base(c.Path), ".svg")
		hc := htmlChart{Title: c.Title, Path: c.Path, Missing: c.Missing, ID: "chart-" + base}
		if c.Missing == "" {
			if svg, ok := inlineSVG(c.SVG); ok {
				hc.SVG = template.HTML(svg)
			} else {
				hc.Missing = "no SVG"
			}
		}
		// The summary's links to the chart's file point at the figure.
		html = strings.ReplaceAll(html, `href="`+c.Path+`"`, `href="#`+hc.ID+`"`)
		if slices.Contains(keyCharts, c.Path) {
			key = append(key, hc)
		} else {
			rest = append(rest, hc)
		}
	}
	// A link to another file of the run directory works beside it only:
	// the page says so, for a reader of the page sent alone.
	html = runFileLink.ReplaceAllString(html, `$0 <small class="runfile">(a file of the run directory)</small>`)
	// The key charts go before "What to try" (after the findings); a
	// summary without that section has them first.
	before, after := "", html
	if i := strings.Index(html, `<h2 id="what-to-try"`); i >= 0 {
		before, after = html[:i], html[i:]
	}
	data := struct {
		RunID         string
		Before, After template.HTML
		Key, Charts   []htmlChart
	}{RunID: runID, Before: template.HTML(before), After: template.HTML(after), Key: key, Charts: rest}
	return htmlTemplate.Execute(w, data)
}

// runFileLink is a link to a file beside the page (a relative path, not
// an anchor of the page nor an address elsewhere).
var runFileLink = regexp.MustCompile(`<a href="[^"#:][^":]*">[^<]*</a>`)

// inlineSVG is a chart's SVG to place in the page: the document without
// its XML declaration and comments before the <svg> element. The charts
// are drawn here, every name in them escaped as XML.
func inlineSVG(svg []byte) (string, bool) {
	s := string(svg)
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", false
	}
	return s[i:], true
}
