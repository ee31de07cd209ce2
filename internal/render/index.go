package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// IndexMarkdown writes report.md: what the run holds, what it was made
// from, what is missing and why, then sections. Only files that are there
// are links.
func IndexMarkdown(w io.Writer, m rundir.Manifest, sections ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Run %s\n\n", EscapeCell(m.RunID))
	fmt.Fprintf(&b, "Status: **%s**", m.Status)
	if m.Reason != "" {
		fmt.Fprintf(&b, ": %s", EscapeCell(m.Reason))
	}
	b.WriteString(".\n\n")
	if len(m.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range m.Notes {
			fmt.Fprintf(&b, "- %s\n", EscapeCell(n))
		}
		b.WriteString("\n")
	}
	if m.Sources != nil {
		b.WriteString(sourcesSection(*m.Sources))
	}
	if len(m.Steps) > 0 {
		b.WriteString(timeSection(m.Steps))
	}
	for _, s := range sections {
		b.WriteString(s)
	}
	t := Table{Header: []string{"artifact", "kind", "status", "why"}}
	for _, a := range m.Artifacts {
		if a.Path == rundir.ReportMD {
			continue
		}
		link := EscapeCell(a.Path)
		if a.Present() {
			link = "[" + EscapeCell(a.File()) + "](" + a.File() + ")"
		}
		t.Rows = append(t.Rows, []string{link, string(a.Kind), string(a.Status), EscapeCell(a.Reason)})
	}
	b.WriteString(t.String())
	_, err := io.WriteString(w, b.String())
	return err
}

// sourcesSection says which file each derived result was made from.
func sourcesSection(s rundir.Sources) string {
	var b strings.Builder
	b.WriteString("## Sources\n\n")
	t := Table{Header: []string{"what", "made from"}}
	for _, r := range []struct {
		what string
		src  rundir.Source
	}{
		{"kernels.md, the summary's kernels", s.Kernels},
		{"ncu/regions/, the summary's regions", s.Regions},
		{"the summary's stages, MFU and operators", s.Stages},
	} {
		from := r.src.Why
		if r.src.Path != "" {
			from = r.src.Path + " (" + r.src.What + ")"
		}
		t.Rows = append(t.Rows, []string{EscapeCell(r.what), EscapeCell(from)})
	}
	b.WriteString(t.String())
	b.WriteString("\n")
	return b.String()
}

// timeSection is report.md's account of where the session's time went, and
// the profiling overhead: the profiling steps' time against the plain
// workload run of stage 1.
func timeSection(steps []rundir.StepTime) string {
	var b strings.Builder
	b.WriteString("## Where the time went\n\n")
	t := Table{Header: []string{"step", "seconds", "exit status"}, Right: []bool{false, true, true}}
	var plain, profiling, check float64
	for _, st := range steps {
		t.Rows = append(t.Rows, []string{EscapeCell(st.Name), model.Fixed(st.Seconds, 1), fmt.Sprint(st.ExitCode)})
		switch {
		case st.Name == "stage1":
			plain += st.Seconds
		case st.Name == "oracle-torch-profiler":
			check += st.Seconds
		case strings.HasPrefix(st.Name, "ncu-") && st.Name != "ncu-sections", strings.HasPrefix(st.Name, "export-"),
			strings.HasPrefix(st.Name, "nsys-"), strings.HasPrefix(st.Name, "timeline-"), st.Name == "cupti-build":
			profiling += st.Seconds
		}
	}
	b.WriteString(t.String())
	if plain > 0 {
		fmt.Fprintf(&b, "\nOverhead: the profiler passes and exports took %s s; stage 1 (the program alone) took %s s, so profiling cost %s times stage 1.",
			model.Fixed(profiling, 1), model.Fixed(plain, 1), model.Fixed(profiling/plain, 1))
		if check > 0 {
			fmt.Fprintf(&b, " The torch.profiler check (a separate run) took %s s more, not counted as profiling.", model.Fixed(check, 1))
		}
		b.WriteString("\n\n")
	} else {
		b.WriteString("\n")
	}
	return b.String()
}
