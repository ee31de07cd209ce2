// The preflight: what a session needs of this machine, checked before it
// starts anything (see the package documentation, "Preflight").

package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/machine"
)

// Probes are what the checks ask the machine.
type Probes struct {
	// GPU reads NVML's view of the selected GPU.
	GPU func() (machine.Provenance, error)
	// Tool runs "PATH --version" and parses its version.
	Tool func(ctx context.Context, path string) (machine.Tool, error)
	// LookPath finds a program as exec.LookPath does.
	LookPath func(file string) (string, error)
	// IsFile reports whether path is a regular file, or why not.
	IsFile func(path string) error
	// Run runs argv, env added to the process's environment, and returns
	// what it printed on stdout and stderr together.
	Run func(ctx context.Context, argv, env []string) ([]byte, error)
}

// Input is what the session will need.
type Input struct {
	// Ncu is the profiler's path; NcuErr why none was found (then Ncu is
	// ignored).
	Ncu    string
	NcuErr error
	// Workload is the workload's argv; Env the environment it gets on top
	// of deepprof's (KEY=VALUE).
	Workload []string
	Env      []string
	// Files must be regular files: the workload's scripts and inputs.
	// Written are files the session writes when it starts (deepprof's own
	// workload script, from the binary): not looked for, listed as such.
	Files, Written []string
	// CheckImports tries the workload's known imports (Imports) in an
	// interpreter of their own: a dry run's preflight. A session leaves
	// them to its first step, which starts the same interpreter anyway; its
	// failure names the missing module (MissingModule).
	CheckImports bool
	// NotRun holds back what a dry run does not start: ncu's version
	// (Ncu) and the import check (Imports), each with why and what to do.
	// A held-back check is skipped, and says what it would have run.
	NotRun NotRun
}

// NotRun says which of the preflight's programs are not started, and why.
type NotRun struct {
	Ncu, Imports *Held
}

// Held is why a program is not started (Why, after "not run: "), and what
// would have it checked (Fix).
type Held struct{ Why, Fix string }

// Check names.
const (
	CheckGPU      = "GPU"
	CheckNcu      = "ncu"
	CheckFiles    = "files"
	CheckWorkload = "workload"
)

// Finding is one check's outcome.
type Finding struct {
	Check string // one of the Check names
	OK    bool
	// Skipped: the check was not made (Input.NotRun); OK is true, Found
	// says what it would have run.
	Skipped bool
	Found   string // what was found, or what went wrong
	Fix     string // what to do; "" when OK and not skipped
}

// PreflightResult is every check's finding, in order, and what the probes read.
type PreflightResult struct {
	Findings []Finding
	// Ncu is the profiler with its version when its check passed.
	Ncu *machine.Tool
}

// Failed lists the names of the checks that failed.
func (r PreflightResult) Failed() []string {
	var out []string
	for _, f := range r.Findings {
		if !f.OK {
			out = append(out, f.Check)
		}
	}
	return out
}

// Err is nil when every check passed, else an error naming those that
// failed.
func (r PreflightResult) Err() error {
	failed := r.Failed()
	if len(failed) == 0 {
		return nil
	}
	return &Error{Failed: failed}
}

// Error says which checks failed; PreflightResult.Write printed what they found.
type Error struct{ Failed []string }

func (e *Error) Error() string {
	return fmt.Sprintf("preflight: %s failed (what was found and what to do is printed above)", strings.Join(e.Failed, ", "))
}

// Write prints the findings, one line each and a "do:" line under a
// failure:
//
//	preflight:
//	  ok    ncu: /usr/local/cuda/bin/ncu, version 2025.3.1.0
//	  FAIL  GPU: nvml: Init: ...
//	        do: run deepprof profile on a machine with an NVIDIA GPU ...
func (r PreflightResult) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("preflight:\n")
	for _, f := range r.Findings {
		mark := "ok  "
		switch {
		case !f.OK:
			mark = "FAIL"
		case f.Skipped:
			mark = "skip"
		}
		fmt.Fprintf(&b, "  %s  %s: %s\n", mark, f.Check, oneLine(f.Found))
		if f.Fix != "" {
			fmt.Fprintf(&b, "        do: %s\n", oneLine(f.Fix))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Timeouts of the probes that run a program: ncu --version answers in a
// second; importing torch cold from a network filesystem can take a minute.
const (
	toolTimeout   = 30 * time.Second
	importTimeout = 2 * time.Minute
)

// Run makes every check: GPU, ncu, files, workload.
func Run(ctx context.Context, in Input, p Probes) PreflightResult {
	var r PreflightResult
	r.Findings = append(r.Findings, checkGPU(p))
	f, t := checkNcu(ctx, in, p)
	r.Findings = append(r.Findings, f)
	r.Ncu = t
	if len(in.Files)+len(in.Written) > 0 {
		r.Findings = append(r.Findings, checkFiles(in.Files, in.Written, p))
	}
	r.Findings = append(r.Findings, checkWorkload(ctx, in, p))
	return r
}

func checkGPU(p Probes) Finding {
	prov, err := p.GPU()
	if err != nil {
		fix := "check the driver (nvidia-smi lists the GPUs it sees) and the device key (device=cuda:N or a UUID)"
		if errors.Is(err, machine.ErrNoGPU) {
			fix = "run deepprof profile on a machine with an NVIDIA GPU and its driver (nvidia-smi lists it); deepprof report, kernels and regions need no GPU"
		}
		return Finding{Check: CheckGPU, Found: err.Error(), Fix: fix}
	}
	g := prov.Selected
	found := fmt.Sprintf("%s (index %d of %d, %s), driver %s, CUDA %s", g.Name, g.Index, prov.DeviceCount, g.UUID, prov.Driver, prov.CUDADriverVersion)
	if prov.MIGDevice != nil {
		found += ", MIG instance " + prov.MIGDevice.Name
	}
	return Finding{Check: CheckGPU, OK: true, Found: found}
}

func checkNcu(ctx context.Context, in Input, p Probes) (Finding, *machine.Tool) {
	if in.NcuErr != nil {
		return Finding{Check: CheckNcu, Found: "not found", Fix: in.NcuErr.Error()}, nil
	}
	if h := in.NotRun.Ncu; h != nil {
		return Finding{Check: CheckNcu, OK: true, Skipped: true, Found: fmt.Sprintf("would run %s --version; not run: %s", in.Ncu, h.Why), Fix: h.Fix}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	t, err := p.Tool(ctx, in.Ncu)
	if err != nil {
		return Finding{Check: CheckNcu, Found: err.Error(),
			Fix: fmt.Sprintf("run %q --version: Nsight Compute prints \"Version 2025.3.1.0 (build ...)\"; install Nsight Compute (it ships with the CUDA toolkit), or set ncu.path to one that runs", in.Ncu)}, nil
	}
	return Finding{Check: CheckNcu, OK: true, Found: fmt.Sprintf("%s, version %s", t.Path, t.Version)}, &t
}

func checkFiles(files, written []string, p Probes) Finding {
	var bad []string
	for _, f := range files {
		if err := p.IsFile(f); err != nil {
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return Finding{Check: CheckFiles, Found: strings.Join(bad, "; "),
			Fix: "run deepprof from the directory the paths are relative to (the repository root for the default workload), or fix workload.argv and workload.inputs"}
	}
	found := slices.Clone(files)
	for _, f := range written {
		found = append(found, f+" (the copy embedded in deepprof, written when the session starts)")
	}
	return Finding{Check: CheckFiles, OK: true, Found: strings.Join(found, ", ")}
}

// pythonName is an interpreter's file name: python, python3, python3.12.
var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

// IsPython reports whether argv runs a Python interpreter.
func IsPython(argv []string) bool {
	return len(argv) > 0 && pythonName.MatchString(filepath.Base(argv[0]))
}

// knownImports are the modules a workload script deepprof ships imports at
// its top, by file name; TestKnownImports checks them against the script.
var knownImports = map[string][]string{
	"hf_causal_lm.py": {"torch", "transformers"},
}

// Imports are the modules the workload argv's script imports, when
// deepprof knows them (its own workloads); nil otherwise.
func Imports(argv []string) []string {
	if !IsPython(argv) {
		return nil
	}
	for _, a := range argv[1:] {
		if m, ok := knownImports[filepath.Base(a)]; ok {
			return m
		}
	}
	return nil
}

// noModule is Python's message for a missing module.
var noModule = regexp.MustCompile(`No module named '([^']+)'`)

func checkWorkload(ctx context.Context, in Input, p Probes) Finding {
	if len(in.Workload) == 0 {
		return Finding{Check: CheckWorkload, Found: "no workload argv", Fix: "set workload.argv, or choose a workload profile (workloads=tiny-llama)"}
	}
	prog := in.Workload[0]
	path, err := p.LookPath(prog)
	if err != nil {
		fix := fmt.Sprintf("install %s, or give workload.argv the program's path", prog)
		if IsPython(in.Workload) {
			fix = fmt.Sprintf("install Python 3 with the workload's modules, or set workload.python to an interpreter that has them (not %s)", prog)
		}
		return Finding{Check: CheckWorkload, Found: err.Error(), Fix: fix}
	}
	mods := Imports(in.Workload)
	if len(mods) == 0 || !in.CheckImports {
		return Finding{Check: CheckWorkload, OK: true, Found: path + " exists"}
	}
	code := importCode(mods)
	if h := in.NotRun.Imports; h != nil {
		return Finding{Check: CheckWorkload, OK: true, Skipped: true, Found: fmt.Sprintf("%s exists; would run %s -c %q; not run: %s", path, prog, code, h.Why), Fix: h.Fix}
	}
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	out, err := p.Run(ctx, []string{prog, "-c", code}, in.Env)
	if err != nil {
		found := fmt.Sprintf("%s -c %q: %v", prog, code, err)
		if m := noModule.FindString(string(out)); m != "" {
			found += ": " + m
		} else if last := lastLine(out); last != "" {
			found += ": " + last
		}
		return Finding{Check: CheckWorkload, Found: found, Fix: installHint(prog, path, mods)}
	}
	return Finding{Check: CheckWorkload, OK: true, Found: fmt.Sprintf("%s imports %s", path, strings.Join(mods, ", "))}
}

// importCode is the code the import check runs (python -c) for mods. It
// first takes the current directory ("", which -c puts first) off
// sys.path: the workload's own run has its script's folder there instead,
// and a torch.py or transformers/ of the directory deepprof runs in is
// not to be imported by a check.
func importCode(mods []string) string {
	return "import sys; sys.path[:] = filter(None, sys.path); import " + strings.Join(mods, ", ")
}

// installHint says how to give the interpreter prog (found at path) the
// modules mods.
func installHint(prog, path string, mods []string) string {
	them := "them"
	if len(mods) == 1 {
		them = "it"
	}
	return fmt.Sprintf("install %s for %s (%s -m pip install %s), or set workload.python to an interpreter that has %s",
		strings.Join(mods, " and "), path, prog, strings.Join(mods, " "), them)
}

// MissingModule is what to do when a Python workload ended on a missing
// module (its log's last lines, tail, hold Python's ModuleNotFoundError or
// ImportError naming it): install it, or choose another interpreter; ""
// when argv runs no interpreter or the program ended on something else (a
// warning about an optional module earlier in the log is not why it
// failed). The module's top-level package is named as pip installs it.
func MissingModule(argv []string, tail string) string {
	if !IsPython(argv) {
		return ""
	}
	m := lastMissing.FindAllStringSubmatch(tail, -1)
	if m == nil {
		return ""
	}
	mod, _, _ := strings.Cut(m[len(m)-1][1], ".")
	if p, ok := pipNames[mod]; ok {
		mod = p
	}
	return installHint(argv[0], argv[0], []string{mod})
}

// lastMissing is the line of Python's error for a missing module.
var lastMissing = regexp.MustCompile(`(?:ModuleNotFoundError|ImportError): No module named '([^']+)'`)

// pipNames are the pip packages of modules whose import name is not
// their package's.
var pipNames = map[string]string{"yaml": "pyyaml", "cv2": "opencv-python", "PIL": "pillow", "sklearn": "scikit-learn"}

// lastLine is the last non-blank line of out, clipped.
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "..."
	}
	return l
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
