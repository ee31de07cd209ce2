// A fake nsys (see the package documentation, "A fake nsys").

package synth

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"

	"github.com/llm-perf-opt/deepprof/internal/nsys"
)

// VersionLine is what the fake prints for --version: the line the nsys
// bundled with Nsight Compute 2025.3.1 printed on the H200
// (fixtures/logs/nsys-bundled-no-report.txt).
const VersionLine = "NVIDIA Nsight Systems version 2025.3.1.0"

// SyntheticNVTXSum is SYNTHETIC: an nvtx_sum CSV in the header shape a real
// `nsys stats --report nvtx_sum --format csv` printed (quoted in
// package nsys's tests), with the ranges the fixture workloads push, each
// written ":name" as nsys writes a default-domain range (nsys.ParseRange).
// No nvtx_sum export was recorded for this project.
const SyntheticNVTXSum = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Style,Range\n" +
	"50.0,8000000,1,8000000.0,8000000.0,8000000,8000000,0.0,PushPop,:decode_all\n" +
	"45.0,7200000,4,1800000.0,1790000.5,1700000,1920000,90000.1,PushPop,:decode_step\n" +
	"5.0,800000,1,800000.0,800000.0,800000,800000,0.0,PushPop,:prefill\n"

// Fake is one fake Nsight Systems.
type Fake struct {
	// KernSum is the path of a recorded cuda_gpu_kern_sum CSV: what
	// `nsys stats` writes for the kernel summary of any report.
	KernSum string
	// NVTXSum is what `nsys stats` writes for nvtx_sum; "" writes no file.
	NVTXSum string
	// NoReportLog, when set, is a recorded log of nsys writing no report
	// (fixtures/logs/nsys-bundled-no-report.txt): `nsys profile` prints what
	// nsys printed there, leaves OUT.qdstrm and no report, and exits 0.
	NoReportLog string
	// NoBase makes `nsys stats` reject the :base report argument, as an nsys
	// that does not know it would.
	NoBase bool
	// Program, when set, runs the profiled program (argv) under
	// `nsys profile`; its exit status is nsys's.
	Program func(argv []string, stdout, stderr io.Writer) int
}

// BaseCSVName is the file the fake's `nsys stats --report
// cuda_gpu_kern_sum:base --output PREFIX` writes: PREFIX + this. How real
// nsys names it is not known here (see nsys.ReportKernSumBase).
const BaseCSVName = "_cuda_gpu_kern_sum_base.csv"

// Run behaves as `nsys args...`, writing to stdout and stderr, and returns
// the exit status.
func (f Fake) Run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "fake nsys: no command")
		return 1
	}
	var err error
	status := 0
	switch args[0] {
	case "--version", "-v":
		fmt.Fprintln(stdout, VersionLine)
	case "profile":
		status, err = f.profile(args[1:], stdout, stderr)
	case "export":
		err = f.export(args[1:])
	case "stats":
		err = f.stats(args[1:], stdout)
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "fake nsys: %v\n", err)
		return 1
	}
	return status
}

// value returns the value of option name ("-o x", "--output x" or
// "--output=x").
func value(args []string, names ...string) (string, bool) {
	for i, a := range args {
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if v, ok := strings.CutPrefix(a, n+"="); ok {
				return v, true
			}
		}
	}
	return "", false
}

func (f Fake) profile(args []string, stdout, stderr io.Writer) (int, error) {
	i := slices.Index(args, "-o")
	if i < 0 || i+1 >= len(args) {
		return 0, fmt.Errorf("profile: no -o")
	}
	out := strings.TrimSuffix(args[i+1], model.NsysExtReport)
	program := args[i+2:] // as nsys.Capture.Args writes them: the program after -o
	if f.NoReportLog != "" {
		said, err := RecordedProfileOutput(f.NoReportLog)
		if err != nil {
			return 0, err
		}
		io.WriteString(stdout, said)
		return 0, os.WriteFile(out+model.NsysExtStream, []byte("fake .qdstrm: the real one was 2.5 GB\n"), 0o644)
	}
	status := 0
	if f.Program != nil && len(program) > 0 {
		status = f.Program(program, stdout, stderr)
	}
	fmt.Fprintf(stdout, "fake nsys: wrote %s\n", filepath.Base(out)+model.NsysExtReport)
	return status, os.WriteFile(out+model.NsysExtReport, []byte("fake nsys report\n"), 0o644)
}

// report checks that the report nsys is asked to read (the last argument)
// exists, as nsys would.
func report(args []string) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("no report given")
	}
	rep := args[len(args)-1]
	if _, err := os.Stat(rep); err != nil {
		return "", fmt.Errorf("report %s: %w", rep, err)
	}
	return rep, nil
}

func (f Fake) export(args []string) error {
	if _, err := report(args); err != nil {
		return err
	}
	if t, _ := value(args, "--type", "-t"); t != "sqlite" {
		return fmt.Errorf("export: --type %q: the fake exports sqlite only", t)
	}
	out, ok := value(args, "--output", "-o")
	if !ok {
		return fmt.Errorf("export: no --output")
	}
	return os.WriteFile(out, []byte("fake SQLite export\n"), 0o644)
}

func (f Fake) stats(args []string, stdout io.Writer) error {
	if _, err := report(args); err != nil {
		return err
	}
	var reports []string
	for i, a := range args {
		if (a == "--report" || a == "-r") && i+1 < len(args) {
			reports = append(reports, args[i+1])
		}
	}
	if len(reports) == 0 {
		return fmt.Errorf("stats: no --report")
	}
	prefix, _ := value(args, "--output", "-o")
	for _, r := range reports {
		var data []byte
		name := model.NsysStatsCSVPath(prefix, r)
		switch r {
		case model.NsysReportKernSum:
			b, err := os.ReadFile(f.KernSum)
			if err != nil {
				return err
			}
			data = b
		case model.NsysReportNVTXSum:
			if f.NVTXSum == "" {
				continue
			}
			data = []byte(f.NVTXSum)
		case nsys.ReportKernSumBase:
			if f.NoBase {
				return fmt.Errorf("report %q: unknown argument \"base\"", r)
			}
			b, err := f.baseSum()
			if err != nil {
				return err
			}
			data, name = b, prefix+BaseCSVName
		default:
			return fmt.Errorf("stats: report %q: the fake knows %s, %s and %s", r, model.NsysReportKernSum, model.NsysReportNVTXSum, nsys.ReportKernSumBase)
		}
		if prefix == "" {
			stdout.Write(data)
			continue
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// baseSum is the :base kernel summary: the recorded rows grouped by
// model.FunctionName, largest total first (ties by name), with the columns it
// can compute exactly.
func (f Fake) baseSum() ([]byte, error) {
	file, err := os.Open(f.KernSum)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	sums, err := nsys.ReadKernelSums(file, f.KernSum)
	if err != nil {
		return nil, err
	}
	base := make([]nsys.KernelSum, len(sums))
	var all float64
	for i, s := range sums {
		base[i] = nsys.KernelSum{Name: model.FunctionName(s.Name), TotalNS: s.TotalNS, Instances: s.Instances}
		all += s.TotalNS
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Name"})
	for _, r := range nsys.TopN(base, 0) {
		ns := r.TotalMS * 1e6
		w.Write([]string{strconv.FormatFloat(100*ns/all, 'f', 1, 64), strconv.FormatFloat(ns, 'f', 0, 64),
			strconv.FormatInt(r.Calls, 10), strconv.FormatFloat(r.MeanMS*1e6, 'f', 1, 64), r.Name})
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// RecordedProfileOutput returns what `nsys profile` printed in a recorded
// shell trace (set -x) such as fixtures/logs/nsys-bundled-no-report.txt: the
// lines after the traced `nsys profile … -o …` command, up to the next
// traced command.
func RecordedProfileOutput(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "+ ") {
			if in {
				break
			}
			in = strings.Contains(line, "nsys profile ") && strings.Contains(line, " -o ")
			continue
		}
		if in {
			out.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if out.Len() == 0 {
		return "", fmt.Errorf("%s: no traced `nsys profile -o …` command with output", path)
	}
	return out.String(), nil
}
