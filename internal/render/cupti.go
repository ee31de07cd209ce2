// report.md's section on the CUPTI run: its files, what the library cost,
// and the torch.profiler check (CuptiSection); oracle-check.json and
// timeline/phases.json.

package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/workload"
)

// OracleCheck is timeline/oracle-check.json: the CUPTI timeline against
// the oracle's figures, row by row (workload.Check has the rule).
type OracleCheck struct {
	Oracle string         `json:"oracle"` // the oracle's file
	Tool   string         `json:"tool"`
	Passed bool           `json:"passed"`
	Rows   []workload.Row `json:"rows"`
}

// OracleCheckJSON writes oracle-check.json.
func OracleCheckJSON(w io.Writer, c OracleCheck) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// CuptiOverhead is what the CUPTI library cost the workload, measured two
// ways: in one process (InProcess, nil when the workload did not measure
// it) and across processes (the recorded run's stages against stage 1's;
// PlainMS 0 without a stage 1).
type CuptiOverhead struct {
	// PlainMS and CuptiMS are medians over repeats of every top-level
	// stage summed per repeat: stage 1's and the CUPTI run's.
	PlainMS, CuptiMS float64
	Repeats          int
	InProcess        *InProcessOverhead
	// Reference is torch.profiler's overhead measured the same way in the
	// oracle's process (nil without it).
	Reference *InProcessOverhead
}

// InProcessOverhead is a profiler's cost measured in one process: the
// median of paired ratios, with each side's median beside it.
type InProcessOverhead struct {
	OnMS, OffMS float64
	model.Ratio
	Method string
}

// CuptiFacts are what report.md says of the CUPTI run.
type CuptiFacts struct {
	Files    []string // the record files, relative to MAIN
	Trace    string   // the trace's path
	Overhead *CuptiOverhead
	Check    *OracleCheck
	// OraclePath is the oracle's figures, for the link; OracleRan says the
	// run has them (the check ran), whether or not they could be compared.
	OraclePath string
	OracleRan  bool
}

// CuptiSection is report.md's account of the CUPTI run; "" without one.
func CuptiSection(f *CuptiFacts) string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("## The CUPTI timeline\n\n")
	var files []string
	for _, p := range f.Files {
		files = append(files, "["+EscapeCell(p)+"]("+p+")")
	}
	fmt.Fprintf(&b, "Kernel times come from deepprof's CUPTI library in the CUPTI run (the workload under no other profiler), one record file per CUDA process (%s): the run's own clocks and caches, no replay. The trace opens in Perfetto (ui.perfetto.dev) or chrome://tracing: [%s](%s).\n\n",
		strings.Join(files, ", "), f.Trace, f.Trace)
	if f.Overhead != nil {
		b.WriteString(overheadText(*f.Overhead))
	}
	switch {
	case f.Check == nil && f.OracleRan:
		fmt.Fprintf(&b, "The torch.profiler check ran ([%s](%s)) and could not be compared with the timeline: the manifest's entry for %s says why.\n\n", f.OraclePath, f.OraclePath, "timeline/oracle-check.json")
	case f.Check == nil:
		b.WriteString("The torch.profiler check did not run in this session: `deepprof profile --check` (timeline.oracle=true) runs the program once more under torch.profiler and compares its kernel times with these, where the program writes its figures (deepprof's default workload does).\n\n")
	}
	if c := f.Check; c != nil {
		verdict := "agrees"
		if !c.Passed {
			verdict = "does NOT agree"
		}
		ranks := ""
		for _, r := range c.Rows {
			if r.Net {
				ranks = fmt.Sprintf(", the collectives (NCCL kernels) net of waiting within %.0f %% (or %g times the oracle's own spread between its generates, where that is more: here %.1f %%): a collective runs on every rank until the last one joins it, so each call's shortest duration over the ranks is its own time, the rest on the others their wait, which differs between two runs; each side's figure is a generate's, the median over the generates (each rank's collectives with their waits are shown, not judged; with them, phases are compared with their collectives left out)",
					100*workload.CollectiveTolerance, workload.SpreadFactor, 100*r.Tolerance)
				break
			}
		}
		fmt.Fprintf(&b, "Independent check: the timeline %s with %s (the torch.profiler check, a separate run, [%s](%s)); phases within %.0f %%, the top %d kernels within %.0f %%%s, launch counts equal:\n\n",
			verdict, c.Tool, f.OraclePath, f.OraclePath, 100*workload.PhaseTolerance, workload.TopKernels, 100*workload.KernelTolerance, ranks)
		b.WriteString("| what | oracle ms | timeline ms | diff | oracle launches | timeline launches | ok |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
		for _, r := range c.Rows {
			ok := "yes"
			switch {
			case r.Informational:
				ok = "shown: " + r.Why
			case !r.OK:
				ok = "no: " + r.Why
			}
			fmt.Fprintf(&b, "| %s | %.3f | %.3f | %+.2f %% | %d | %d | %s |\n", EscapeCell(r.What), r.OracleMS, r.TimedMS, 100*r.Diff, r.OracleLaunches, r.TimedLaunches, EscapeCell(ok))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// overheadText is report.md's account of the library's overhead.
func overheadText(o CuptiOverhead) string {
	var b strings.Builder
	across := ""
	if o.PlainMS > 0 {
		across = fmt.Sprintf("with the library the workload's stages took %.3f ms per repeat against %.3f ms in stage 1, a separate process (medians of %d repeats): %.3fx",
			o.CuptiMS, o.PlainMS, o.Repeats, o.CuptiMS/o.PlainMS)
	}
	ip := o.InProcess
	switch {
	case ip == nil:
		b.WriteString("Overhead: " + across + ". The workload did not measure it in one process (deepprof's default workload does, pausing the library between repeats), so this includes the machine's spread between processes.")
	default:
		fmt.Fprintf(&b, "Overhead: **%.3fx** (quartiles %.3f–%.3f): in the recorded process, the median over %d pairs of a repeat with recording on and one with recording paused (%s); medians %.3f ms on, %.3f ms paused.",
			ip.Median, ip.Q1, ip.Q3, ip.Pairs, ip.Method, ip.OnMS, ip.OffMS)
		if across != "" {
			fmt.Fprintf(&b, " Across processes, %s; that comparison also carries the machine's spread between processes.", across)
		} else {
			b.WriteString(" No separate plain run was made: this run's figures stand in for it (workload.plain_run=auto).")
		}
	}
	if r := o.Reference; r != nil {
		fmt.Fprintf(&b, " For reference, torch.profiler (CUDA activity) cost %.3fx (quartiles %.3f–%.3f) on this machine, measured the same way over %d pairs of generates in the oracle's process.",
			r.Median, r.Q1, r.Q3, r.Pairs)
	}
	b.WriteString("\n\n")
	return b.String()
}

// PhasesJSON writes timeline/phases.json.
func PhasesJSON(w io.Writer, p *facts.PhaseReport) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
