package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/llm-perf-opt/deepprof/internal/rundir"
	"github.com/llm-perf-opt/deepprof/internal/synth"
)

// TestMain makes the test binary also act as the programs a session runs:
// deepprof itself, and fake ncu, nsys and python3 executables that replay
// recorded tool output (testscript puts them on PATH for the scripts).
func TestMain(m *testing.M) {
	synth.CollectLess()
	testscript.Main(m, map[string]func(){
		"deepprof": main,
		"ncu":      fakeNcu,
		"nsys":     fakeNsys,
		"python3":  fakeWorkload,
		// the any-program form: a program with no deepprof import, and
		// the C compiler the CUPTI library is built with
		"my-program": fakeProgram,
		"fakecc":     fakeCC,
	})
}

// TestScripts runs testdata/script/*.txtar: whole commands through real
// processes, with no GPU.
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs("../../fixtures")
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := filepath.Abs("../../profiles")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("PROFILES", profiles)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"synthetic": synthetic, "treehash": treehash, "exits": exits, "markrun": markrun},
	})
}

// exits runs a program of the script's PATH in its working directory and
// checks its exit status; what it printed is the command's stdout and
// stderr, for the next stdout and stderr checks:
//
//	exits CODE PROGRAM ARGS...
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	var prog string
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[1]); fileExists(p) {
			prog = p
			break
		}
	}
	if prog == "" {
		ts.Fatalf("exits: %s is not on the script's PATH", args[1])
	}
	cmd := exec.Command(prog, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Stdout, cmd.Stderr = ts.Stdout(), ts.Stderr()
	code := 0
	if err := cmd.Run(); err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			ts.Fatalf("exits: %v", err)
		}
		code = ee.ExitCode()
	}
	if code != want {
		ts.Fatalf("%s %s: exit status %d, want %d", args[1], strings.Join(args[2:], " "), code, want)
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// treehash prints one hash of the tree at DIR: every path under it, its
// type, its mode and its content (a link's target, never followed), so that
// a script can show that a command changed nothing there:
//
//	treehash DIR
func treehash(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: treehash DIR")
	}
	root := ts.MkAbs(args[0])
	h := sha256.New()
	n := 0
	ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00", filepath.ToSlash(rel), info.Mode())
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s\x00", t)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		n++
		return nil
	}))
	fmt.Fprintf(ts.Stdout(), "%d entries %x\n", n, h.Sum(nil))
}

// markrun marks DIR the run directory of the run ID, as rundir.Create
// marks each run it makes (rundir.WriteMark), so that a script's run made
// of files in its archive is one deepprof takes for a run:
//
//	markrun DIR ID
func markrun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: markrun DIR ID")
	}
	ts.Check(rundir.WriteMark(ts.MkAbs(args[0]), args[1]))
	_, err := rundir.SweepStaging(ts.MkAbs(args[0]))
	ts.Check(err)
}

// synthetic derives a SYNTHETIC CUPTI record file from a recorded one:
//
//	synthetic no-nvtx RECORDED OUT    the recording without its NVTX records
//	synthetic no-activity RECORDED OUT its header, notes and end line only
//
// (synth.WithoutNVTX, WithoutActivity): program shapes no recording was
// made of, made at test time so that no fixture is edited.
func synthetic(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: synthetic no-nvtx|no-activity RECORDED OUT")
	}
	derive := map[string]func([]byte) []byte{"no-nvtx": synth.WithoutNVTX, "no-activity": synth.WithoutActivity}[args[0]]
	if derive == nil {
		ts.Fatalf("synthetic: unknown shape %q", args[0])
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), derive(b), 0o644))
}

// fakeReport is what the fake ncu writes as a report: which recorded
// exports stand for it.
type fakeReport struct{ Raw, Details string }

// fakeNcu behaves like ncu on recorded output. Profiling passes (-o) print
// the recorded log $FAKE_NCU_LOG and write a stand-in report naming the
// recorded exports: $FAKE_TIMING_RAW for a pass with the timing metric,
// $FAKE_DEEP_RAW and $FAKE_DEEP_DETAILS otherwise; --import prints them.
func fakeNcu() {
	args := os.Args[1:]
	arg := func(flag string) string {
		if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	switch {
	case slices.Contains(args, "--version") && os.Getenv("FAKE_NCU_NO_VERSION") != "":
		// an ncu that prints no version (and exits 0)
	case slices.Contains(args, "--version"): // as ncu 2025.3.1 printed it on the H200
		fmt.Print("NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\nVersion 2025.3.1.0 (build 36398880) (public-release)\n")
	case slices.Contains(args, "--list-sections"):
		fmt.Println("Identifier  Display Name  (fake ncu)")
	case slices.Contains(args, "--import"):
		b, err := os.ReadFile(arg("--import"))
		if err != nil {
			fmt.Fprintf(os.Stderr, "==ERROR== cannot read %s\n", arg("--import"))
			os.Exit(1)
		}
		var r fakeReport
		if err := json.Unmarshal(b, &r); err != nil {
			os.Exit(1)
		}
		src := r.Raw
		if arg("--page") == "details" {
			src = r.Details
		}
		copyFile(os.Stdout, src)
	default:
		out := arg("-o")
		r := fakeReport{Raw: os.Getenv("FAKE_DEEP_RAW"), Details: os.Getenv("FAKE_DEEP_DETAILS")}
		if arg("--set") == "" && slices.Contains(args, "gpu__time_duration.sum") { // the timing pass
			r = fakeReport{Raw: os.Getenv("FAKE_TIMING_RAW")}
		}
		if log := os.Getenv("FAKE_NCU_LOG"); log != "" {
			copyFile(os.Stderr, log)
		}
		if os.Getenv("FAKE_NCU_NO_REPORT") != "" {
			return
		}
		b, _ := json.Marshal(r)
		if err := os.WriteFile(strings.TrimSuffix(out, ".ncu-rep")+".ncu-rep", b, 0o644); err != nil {
			os.Exit(1)
		}
	}
}

// fakeNsys behaves like nsys on recorded output (synth.Fake): with
// $FAKE_NSYS_KERN_SUM, a usable nsys whose stats replay that recorded
// kernel summary (nvtx_sum: synth.SyntheticNVTXSum); with
// $FAKE_NSYS_NO_REPORT_LOG, the nsys of that recorded log, which exits 0
// and writes no report. `nsys profile` runs the workload (the fake python3),
// so its output shows the phase. With neither set it is no usable nsys:
// every command fails, --version too, so scripts that do not ask for nsys
// get the ncu timing pass.
func fakeNsys() {
	f := synth.Fake{
		KernSum: os.Getenv("FAKE_NSYS_KERN_SUM"), NVTXSum: synth.SyntheticNVTXSum,
		NoReportLog: os.Getenv("FAKE_NSYS_NO_REPORT_LOG"),
		Program: func(argv []string, stdout, stderr io.Writer) int {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			return 0
		},
	}
	if f.KernSum == "" && f.NoReportLog == "" {
		fmt.Fprintln(os.Stderr, "fake nsys: not set up (FAKE_NSYS_KERN_SUM or FAKE_NSYS_NO_REPORT_LOG)")
		os.Exit(1)
	}
	os.Exit(f.Run(os.Args[1:], os.Stdout, os.Stderr))
}

// copyFile copies the file at path to w; a recorded export kept gzipped
// (path.gz, as in fixtures/runs) is copied as the tool printed it.
func copyFile(w io.Writer, path string) {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		r = zr
	}
	if _, err := io.Copy(w, r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// fakeWorkload is a workload that writes a SYNTHETIC report of the
// contract's shape to $DEEPPROF_REPORT. Run as "python3 -c CODE" (the
// preflight's import check) it succeeds, or, with $FAKE_PYTHON_FAILS set to
// a recorded interpreter output, prints it and exits 1; a script run with
// $FAKE_PYTHON_FAILS set does the same, as the interpreter would.
func fakeWorkload() {
	if out := os.Getenv("FAKE_PYTHON_FAILS"); out != "" {
		copyFile(os.Stderr, out)
		os.Exit(1)
	}
	if len(os.Args) > 1 && os.Args[1] == "-c" {
		return
	}
	fmt.Printf("fake workload %s phase=%s\n", strings.Join(os.Args[1:], " "), os.Getenv("DEEPPROF_PHASE"))
	if p := os.Getenv("DEEPPROF_REPORT"); p != "" {
		rep := `{"model": {"name": "fake", "arch": "LlamaForCausalLM", "params": 1, "dtype": "bfloat16"},
 "tokens": {"prompt": 64, "generated": 4}, "stages": {"prefill": {"ms": [2.0]}, "decode": {"ms": [8.0]}}}`
		if err := os.WriteFile(p, []byte(rep), 0o644); err != nil {
			os.Exit(1)
		}
	}
}

// fakeProgram is a program that knows nothing of deepprof: it writes no
// report; under deepprof's CUPTI library ($DEEPPROF_CUPTI_DIR set) it
// "records" the real recording $FAKE_CUPTI_RECORD as its own file; it
// prints its arguments and exits with $FAKE_EXIT (0 when unset).
//
// With $FAKE_CUPTI_CHILD_RECORD set it is a program whose GPU work runs in
// a child process too (as nvtx_ranges twoproc_exec: fork + exec, then the
// parent's own work): it first runs itself again as a child, with its
// environment (the library's variables included) and that recording as the
// child's $FAKE_CUPTI_RECORD, and waits for it.
func fakeProgram() {
	fmt.Printf("my-program %s\n", strings.Join(os.Args[1:], " "))
	if child := os.Getenv("FAKE_CUPTI_CHILD_RECORD"); child != "" {
		// os.Args[0] is the name testscript installed on PATH, which
		// TestMain dispatches on; os.Executable would be the test binary's.
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), "FAKE_CUPTI_CHILD_RECORD=", "FAKE_CUPTI_RECORD="+child)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "my-program: child:", err)
			os.Exit(1)
		}
	}
	if dir := os.Getenv("DEEPPROF_CUPTI_DIR"); dir != "" && os.Getenv("FAKE_CUPTI_RECORD") != "" {
		b, err := os.ReadFile(os.Getenv("FAKE_CUPTI_RECORD"))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, fmt.Sprintf("cupti-%d.tsv", os.Getpid())), b, 0o644)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if code := os.Getenv("FAKE_EXIT"); code != "" && code != "0" {
		fmt.Fprintln(os.Stderr, "RuntimeError: the fake program failed")
		os.Exit(3)
	}
}

// fakeCC is a C compiler that writes its -o file.
func fakeCC() {
	for i, a := range os.Args {
		if a == "-o" && i+1 < len(os.Args) {
			if err := os.WriteFile(os.Args[i+1], []byte("a stand-in library"), 0o755); err != nil {
				os.Exit(1)
			}
			return
		}
	}
	os.Exit(2)
}
