package nsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// DefaultTrace is the --trace list used when Capture.Trace is empty: CUDA
// (kernels, memcpys, the API calls that launch them) and NVTX (the ranges that
// gate the capture and name the stages). osrt, which the RTX 5090 recordings
// in fixtures/nsys also traced, is left out on purpose: it records every
// pthread, poll, read and ioctl call of the Python process, which costs
// overhead and report size and feeds nothing this package reads (the kernel
// and NVTX summaries). Ask for it with Trace when a timeline is to be read by
// a person.
var DefaultTrace = []string{"cuda", "nvtx"}

// DefaultReports are the stats reports StatsArgs asks for when given none.
var DefaultReports = []string{model.NsysReportKernSum, model.NsysReportNVTXSum}

// RegisterOnlyEnv turns off nsys's default of matching --nvtx-capture only
// against NVTX registered strings. Ranges pushed with plain strings
// (torch.cuda.nvtx.range_push, nvtxRangePushA) are not registered strings, so
// without it a capture range never opens and nsys writes an empty report. The
// recordings in fixtures/nsys pass it as --env-var; Env returns it for the
// environment of the nsys process, which the profiled program inherits.
const RegisterOnlyEnv = "NSYS_NVTX_PROFILER_REGISTER_ONLY=0"

// Capture describes one `nsys profile` run.
type Capture struct {
	// Output is the report path without its extension (-o): nsys appends
	// .nsys-rep (2021.4 and later) or .qdrep. See ResolveReport.
	Output string
	// Trace is the --trace list; empty means DefaultTrace.
	Trace []string
	// CaptureRange is "" (profile the whole run) or "nvtx" (start collecting
	// when the NVTXCapture range opens, stop when it closes:
	// --capture-range=nvtx --capture-range-end=stop).
	CaptureRange string
	// NVTXCapture is the range that opens the capture, in nsys's own syntax,
	// which is NOT ncu's. The forms of --nvtx-capture are "range@domain,
	// range, range@*" and it applies only with --capture-range=nvtx: so say
	// the option tables quoted from `nsys profile --help` / the Nsight Systems
	// User Guide in public notes (the docs search did not return NVIDIA's page
	// itself), and the recordings in fixtures/nsys use the bare form
	// (--nvtx-capture=decode). So:
	//   "decode_all"      range decode_all in the default domain
	//   "decode_all@LLM"  range decode_all in domain LLM
	//   "decode_all@*"    range decode_all in any domain
	// whereas ncu's --nvtx-include writes the domain first ("LLM@decode_all/";
	// range paths: docs/cli.md, regions, and package model). Given to nsys, "LLM@decode_all" means range LLM in domain
	// decode_all, which matches nothing: no error, just an empty capture. Use
	// CaptureRange to build the string from a range and its domain.
	NVTXCapture string
	// SampleCPU keeps nsys's CPU IP sampling and context-switch tracing. Off
	// (the default) passes --sample=none --cpuctxsw=none: the timeline stage
	// needs GPU kernel times only, and sampling a Python process adds overhead.
	SampleCPU bool
	// Force overwrites an existing report (--force-overwrite=true) instead of
	// failing.
	Force bool
	// Program is the profiled command and its arguments.
	Program []string
	// Extra are more nsys options, put after the ones above and before the
	// program (e.g. "--cuda-graph-trace=node").
	Extra []string
}

// Args returns the arguments of `nsys profile` for c, to be passed after the
// nsys binary (exec.Command(nsysPath, args...)); the first is "profile" and
// the program comes last. It checks what nsys would otherwise accept and then
// do nothing useful with.
func (c Capture) Args() ([]string, error) {
	if c.Output == "" {
		return nil, errors.New("nsys capture: Output is empty: nsys needs -o to name its report")
	}
	if len(c.Program) == 0 || c.Program[0] == "" {
		return nil, errors.New("nsys capture: no program to profile")
	}
	if strings.HasPrefix(c.Program[0], "-") {
		return nil, fmt.Errorf("nsys capture: program %q starts with '-': nsys would read it as an option", c.Program[0])
	}
	trace := c.Trace
	if len(trace) == 0 {
		trace = DefaultTrace
	}
	for _, t := range trace {
		if t == "" || strings.ContainsAny(t, ", \t") {
			return nil, fmt.Errorf("nsys capture: trace %q: want one API name per element (cuda, nvtx, osrt ...)", t)
		}
	}
	args := []string{"profile", "--trace=" + strings.Join(trace, ",")}
	if !c.SampleCPU {
		args = append(args, "--sample=none", "--cpuctxsw=none")
	}
	switch c.CaptureRange {
	case "":
		if c.NVTXCapture != "" {
			return nil, fmt.Errorf("nsys capture: NVTXCapture %q needs CaptureRange \"nvtx\" (nsys applies --nvtx-capture only with --capture-range=nvtx)", c.NVTXCapture)
		}
	case "nvtx":
		if err := checkNVTXCapture(c.NVTXCapture); err != nil {
			return nil, err
		}
		// `nsys profile --help`: "Note that you must enable CUDA or NVTX
		// tracing of the target application for '-c cudaProfilerApi' or
		// '-c nvtx' to work."
		if !slices.Contains(trace, "nvtx") && !slices.Contains(trace, "cuda") {
			return nil, fmt.Errorf("nsys capture: --capture-range=nvtx needs cuda or nvtx in Trace, have %q", strings.Join(trace, ","))
		}
		// stop: collection ends when the range closes; the program runs on.
		args = append(args, "--capture-range=nvtx", "--capture-range-end=stop", "--nvtx-capture="+c.NVTXCapture)
	default:
		return nil, fmt.Errorf("nsys capture: CaptureRange %q: want \"\" or \"nvtx\"", c.CaptureRange)
	}
	if c.Force {
		args = append(args, "--force-overwrite=true")
	}
	args = append(args, "-o", c.Output)
	args = append(args, c.Extra...)
	return append(args, c.Program...), nil
}

// checkNVTXCapture rejects the mistakes that make a capture silently empty
// (CheckCaptureRange).
func checkNVTXCapture(s string) error {
	if s == "" {
		return errors.New("nsys capture: CaptureRange \"nvtx\" needs NVTXCapture, the range that starts the capture")
	}
	if err := CheckCaptureRange(s); err != nil {
		return fmt.Errorf("nsys capture: NVTXCapture: %w", err)
	}
	return nil
}

// Env returns what the nsys process's environment needs beyond the caller's:
// RegisterOnlyEnv when the capture is gated by an NVTX range, nothing
// otherwise.
func (c Capture) Env() []string {
	if c.CaptureRange == "nvtx" {
		return []string{RegisterOnlyEnv}
	}
	return nil
}

// StatsArgs returns the arguments of `nsys stats` (after the nsys binary)
// that write each of reports (DefaultReports when empty) as CSV for report.
// With outputPrefix set, nsys writes one file per report, named as
// StatsCSVPath gives; with outputPrefix "", --output is left out and nsys
// chooses. The stats are run as their own step rather than with
// `nsys profile --stats=true`, which prints tables to the console.
func StatsArgs(report string, reports []string, outputPrefix string) []string {
	if len(reports) == 0 {
		reports = DefaultReports
	}
	args := []string{"stats"}
	for _, r := range reports {
		args = append(args, "--report", r)
	}
	args = append(args, "--format", "csv")
	if outputPrefix != "" {
		args = append(args, "--output", outputPrefix)
	}
	return append(args, report)
}

// ExportSQLiteArgs returns the arguments of `nsys export` (after the nsys
// binary) that write report as the SQLite database out.
func ExportSQLiteArgs(report, out string) []string {
	return []string{"export", "--type", "sqlite", "--output", out, report}
}

// ErrNoReport is ResolveReport's error (a *NoReportError) when no report
// exists.
var ErrNoReport = errors.New("no nsys report")

// NoReportError is ResolveReport's error when nsys wrote no report: where it
// looked (Dir/Base, Dir as the caller names it) and the size of the raw
// data nsys left there instead, Stream (-1 when there is none). It is
// ErrNoReport.
type NoReportError struct {
	Dir, Base string
	Stream    int64
}

func (e *NoReportError) Error() string { return ErrNoReport.Error() + ": " + e.Why() }

// Is reports whether target is ErrNoReport.
func (e *NoReportError) Is(target error) bool { return target == ErrNoReport }

// Why says which files are not there and what to do, without ErrNoReport's
// words.
func (e *NoReportError) Why() string {
	stem := filepath.Join(e.Dir, e.Base)
	if e.Stream >= 0 {
		return fmt.Sprintf("neither %s nor %s exists, but %s (%d bytes) does: nsys collected data and its importer (QdstrmImporter) failed to convert it into a report; see the nsys output, and use a standalone Nsight Systems rather than the one bundled with Nsight Compute",
			stem+model.NsysExtReport, stem+model.NsysExtOldReport, stem+model.NsysExtStream, e.Stream)
	}
	return fmt.Sprintf("neither %s nor %s exists (did nsys run, and did the capture range open?)", stem+model.NsysExtReport, stem+model.NsysExtOldReport)
}

// ResolveReport returns the path of the report nsys wrote for -o dir/base
// (base may carry its extension already): base.nsys-rep, else base.qdrep.
// When neither exists the error is a *NoReportError naming both; when a
// base.qdstrm is there instead, it says that nsys collected data but its
// importer (QdstrmImporter) failed to turn it into a report, as happened with
// the nsys bundled in Nsight Compute (fixtures/logs/nsys-bundled-no-report.txt:
// a multi-GB .qdstrm, no report, the importer missing libdw.so.1).
func ResolveReport(dir, base string) (string, error) { return ResolveReportAs(dir, dir, base) }

// ResolveReportAs is ResolveReport with its errors naming the files under
// shown instead of dir (the run directory's own names, relative to it).
func ResolveReportAs(dir, shown, base string) (string, error) {
	base = strings.TrimSuffix(strings.TrimSuffix(base, model.NsysExtReport), model.NsysExtOldReport)
	if base == "" {
		return "", errors.New("nsys report: empty base name")
	}
	stem := filepath.Join(dir, base)
	for _, ext := range []string{model.NsysExtReport, model.NsysExtOldReport} {
		p := stem + ext
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("nsys report: %s is not a regular file", filepath.Join(shown, base)+ext)
		case !errors.Is(err, fs.ErrNotExist):
			if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
				err = &fs.PathError{Op: pe.Op, Path: filepath.Join(shown, base) + ext, Err: pe.Err}
			}
			return "", fmt.Errorf("nsys report: %w", err)
		}
	}
	e := &NoReportError{Dir: shown, Base: base, Stream: -1}
	if fi, err := os.Stat(stem + model.NsysExtStream); err == nil && fi.Mode().IsRegular() {
		e.Stream = fi.Size()
	}
	return "", e
}
