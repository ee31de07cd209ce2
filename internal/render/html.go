package render

import (
	"bytes"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
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
	Title, Path, Missing string
	Src                  template.URL
}

// SummaryHTML writes report.html: one self-contained page (no network:
// its Content-Security-Policy forbids any fetch) with the stakeholder
// summary as summaryMD says it, its charts inline as data: images, and
// tables that sort on a click.
func SummaryHTML(w io.Writer, runID string, summaryMD []byte, charts []Chart) error {
	var body bytes.Buffer
	if err := markdown.Convert(summaryMD, &body); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	data := struct {
		RunID  string
		Body   template.HTML
		Charts []htmlChart
	}{RunID: runID, Body: template.HTML(body.String())}
	for _, c := range charts {
		hc := htmlChart{Title: c.Title, Path: c.Path, Missing: c.Missing}
		if c.Missing == "" {
			if len(c.SVG) == 0 {
				hc.Missing = "no SVG"
			} else {
				hc.Src = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(c.SVG))
			}
		}
		data.Charts = append(data.Charts, hc)
	}
	return htmlTemplate.Execute(w, data)
}
