package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/llm-perf-opt/deepprof/harness"
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(harness.GCPercent)
	}
	err := func() error {
		defer cpuProfile(os.Getenv(envCPUProfile))() // written on a panic too
		return run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	}()
	if err != nil {
		if !errors.Is(err, errUsageShown) {
			fmt.Fprintf(os.Stderr, "deepprof: %v\n", oneLine(err))
		}
		os.Exit(exitCode(err))
	}
}

// envCPUProfile names a file for a CPU profile of the whole command (go
// tool pprof reads it), written when the command returns: for deepprof's
// own developers, measuring where a session's time outside its steps goes
// (docs/development.md). A command ended by a signal leaves it empty.
const envCPUProfile = "DEEPPROF_CPUPROFILE"

// cpuProfile starts a CPU profile into path ("": none) and returns what
// ends it; a profile that cannot start is said on stderr, not fatal.
func cpuProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "deepprof: %s: no CPU profile: %v\n", envCPUProfile, err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "deepprof: %s: the CPU profile may be cut short: %v\n", envCPUProfile, err)
		}
	}
}

// errUsageShown marks an error whose message was already printed with usage.
var errUsageShown = errors.New("usage")

// usageError is a mistake in the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// exitError is an error with an exit status of its own: deepprof diff exits
// 1 on a regression and 2 on any error, so that CI can tell them apart.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) || errors.Is(err, errUsageShown) {
		return 2
	}
	return 1
}

// oneLine keeps an error message on one line, as the CLI contract
// promises, with what a name from a profiled program may hold escaped
// (U+202E as \u202e, NUL as \u0000): the line breaks between joined
// errors become spaces, any other hidden rune is shown, never acted on.
func oneLine(err error) string {
	return harness.EscapeHidden(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " "))
}

const usage = `deepprof: deep profiling reports for LLM inference on NVIDIA GPUs.

Usage:
  deepprof kernels [--top N] [--format text|md|json|csv] FILE|-
      Print the kernel table of one ncu CSV export: the raw page, the details
      page or a --log-file capture, plain or .gz; "-" reads standard input.
  deepprof regions [--format text|md|json|csv] [--include RE]... [--exclude RE]...
                   [--kernel-include RE]... [--kernel-exclude RE]...
                   [--metrics GROUPS] [--top N] [--aggregate=false] [--out DIR] FILE|-
      Summarize one ncu CSV export by NVTX region (stack path, nested regions
      as their own sections), per (process, device) and across them; --out
      writes report.md, report.json and a kernel table per region into DIR.
      --include/--exclude choose the regions listed (by name, such as
      decode_all/decode_step; their totals stay whole), --kernel-include/
      --kernel-exclude the kernels counted. A pattern that matches nothing is
      an error.
  deepprof profile [--profile NAME]... [--profiles DIR] [--check] [--dry-run] [--print-config]
                   [--no-preflight] [key=value | +key=value | group=name]... [-- CMD ARGS...]
      Run a Stage 2 session into a new run directory: stage 1 (the program
      alone), the timeline (CUPTI, nsys or an ncu timing pass: timeline.tool),
      the deep metrics of the top kernels (in the CUPTI run by deepprof's
      library, or an ncu pass: ncu.deep_source), then every derived file; --dry-run
      prints every step instead. Without -- the workload is deepprof's own
      (tiny-llama); after --, any program. First a preflight checks the GPU
      (NVML), ncu, the workload's files and interpreter, and stops with what it
      found and what to do; --check adds the torch.profiler check.
  deepprof report [--top N] MAIN
      Rebuild every derived file of a run directory from its raw records: the
      stakeholder summary (stakeholder_summary.md, report.html, summary.json),
      kernels.md/json, ncu/regions/, the trace, report.md and manifest.json;
      no GPU. Only a folder deepprof made (its .deepprof-run) is a run
      directory, and only the files deepprof wrote there are replaced or
      removed.
  deepprof merge --out MAIN RUN...
      Gather the run directories of one multi-node session (each node's
      deepprof profile, same configuration and launcher) into the new run
      directory MAIN: every rank's CUPTI records and deep pass, stage 1 from
      the node that has it; then rebuild it as one run. No GPU.
  deepprof diff [--threshold 5%] [--gate gpu|host] [--format text|md|json|csv]
                [--allow-mismatch] [--allow-partial] RUN_A RUN_B
      Compare run B with run A (a run directory or a baseline file): stage
      times, kernels by name, regions, MFU. A change counts when it exceeds
      the threshold and, for stages with repeats, Welch's t-test (α = 0.05).
      Exit status 0: no regression; 1: regression; 2: error or a part that
      could not be compared.
  deepprof baseline [--top N] [--gate gpu|host] [--allow-partial] MAIN [RUN...]
      Print the baseline of a run directory (JSON: per-stage mean, sd and
      repeats, the top N kernels, region totals, MFU) for golden/perf/;
      with more runs of the program, the spread between them too.
  deepprof completion bash|zsh|fish
      Print the shell's completion script for the commands and their flags.
  deepprof version
      Print deepprof's version and the revision it was built from.
  deepprof help [COMMAND]
      Print this help, or a command's (as COMMAND --help).

Run "deepprof COMMAND --help" for a command's flags (help goes to standard output).
Exit status: 0 on success; 1 on a failure (bad input: "deepprof: FILE:LINE: what is
wrong"); 2 on a bad command line (an unknown command, flag or key, a path that is
not a run directory); deepprof diff as above.
`

type command struct {
	name string
	run  func(args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"kernels", runKernels},
		{"regions", runRegions},
		{"report", runReport},
		{"merge", runMerge},
		{"profile", runProfile},
		{"diff", runDiff},
		{"baseline", runBaseline},
		{"completion", runCompletion},
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		io.WriteString(stderr, usage)
		return errUsageShown
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" && !strings.HasPrefix(args[1], "-") { // help CMD is CMD --help
			if args[1] == "version" || args[1] == "help" {
				return run([]string{args[1], "--help"}, stdin, stdout, stderr)
			}
			c, err := commandNamed(args[1])
			if err != nil {
				return err
			}
			return c.run([]string{"--help"}, stdin, stdout, stderr)
		}
		_, err := io.WriteString(stdout, usage)
		return err
	case "version", "-version", "--version":
		if len(args) > 1 && (args[1] == "--help" || args[1] == "-h" || args[1] == "-help") {
			_, err := io.WriteString(stdout, "Usage: deepprof version\n\nPrint deepprof's version and the revision it was built from.\n")
			return err
		}
		_, err := fmt.Fprintln(stdout, version())
		return err
	}
	c, err := commandNamed(args[0])
	if err != nil {
		return err
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

// commandNamed is the command of that name, or a usage error that names
// the closest one.
func commandNamed(name string) (command, error) {
	names := []string{"help", "version"}
	for _, c := range commands() {
		if c.name == name {
			return c, nil
		}
		names = append(names, c.name)
	}
	for _, n := range names {
		if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) {
			return command{}, &usageError{fmt.Sprintf("unknown command %q: did you mean %q? (run \"deepprof help\")", name, n)}
		}
	}
	if c := harness.Suggest(name, names); c != "" {
		return command{}, &usageError{fmt.Sprintf("unknown command %q: did you mean %q? (run \"deepprof help\")", name, c)}
	}
	return command{}, &usageError{fmt.Sprintf("unknown command %q (run \"deepprof help\")", name)}
}

// parseFlags parses flags wherever they stand among the positional arguments
// ("kernels FILE --top 5" works as "kernels --top 5 FILE"). "-" is positional.
// help is true when --help was asked for (usage is printed; the command is
// done, with no error).
func parseFlags(fs *flagSet, args []string) (pos []string, help bool, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, true, fs.usage(fs.stdout)
			}
			return nil, false, flagError(fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, false, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagError is the usage error of a command line the flag package refused,
// with the flag written as the help writes it and, for an unknown one, the
// closest defined flag.
func flagError(fs *flagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("unknown flag --%s", name)
		if c := harness.Suggest(name, names); c != "" {
			msg += fmt.Sprintf(" (did you mean --%s?)", c)
		}
	} else {
		msg = strings.ReplaceAll(msg, " -", " --")
	}
	return &usageError{fmt.Sprintf("%s: %s; run \"deepprof %s --help\" for its flags", fs.Name(), msg, fs.Name())}
}

// onePositional checks that a command got exactly one positional argument.
func onePositional(command, what string, pos []string) error {
	if len(pos) != 1 {
		return &usageError{fmt.Sprintf("%s takes one %s, got %s", command, what, arguments(len(pos)))}
	}
	return nil
}

// arguments says how many positional arguments a command got.
func arguments(n int) string {
	if n == 1 {
		return "1 argument"
	}
	return fmt.Sprintf("%d arguments", n)
}

// flagSet is a command's flags, and what its --help prints: the synopsis,
// then every flag from its definition (printFlags), then more text (extra).
type flagSet struct {
	*flag.FlagSet
	synopsis string
	extra    string
	stdout   io.Writer
}

// newFlagSet makes a command's flag set. Go's flag package prints nothing:
// --help prints the usage to stdout (parseFlags), a bad flag is a
// usageError that main prints once, on stderr.
func newFlagSet(name, synopsis string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis, stdout: stdout}
}

// usage writes the command's help: synopsis, flags, more text.
func (fs *flagSet) usage(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: deepprof %s\n", harness.Wrap(fs.synopsis, helpWidth-len("Usage: deepprof "), helpWidth, strings.Repeat(" ", len("Usage: deepprof "))))
	flags := 0
	fs.VisitAll(func(*flag.Flag) { flags++ })
	if flags > 0 { // a command with no flags gets no empty heading
		b.WriteString("\nFlags:\n")
		printFlags(&b, fs.FlagSet)
	}
	b.WriteString(fs.extra)
	_, err := io.WriteString(w, b.String())
	return err
}

// helpWidth is the widest line of any help text (TestHelpFitsTheTerminal).
const helpWidth = 120

// printFlags writes each flag as --name, with its argument's name, its
// usage wrapped and its default: from the definitions the parser uses, so
// that help cannot disagree with it.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			text += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "%s\n      %s\n", line, harness.Wrap(text, helpWidth-6, helpWidth, "      "))
	})
}
