// A profiling session through the facade: the configuration composed, the
// preflight, the dry run and the run.

package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	deepprof "github.com/llm-perf-opt/deepprof"
	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/machine"
	"github.com/llm-perf-opt/deepprof/internal/session"
)

// DefaultProfilesDir is where profiles are looked for by default: the
// embedded ones, with ./profiles over them when it exists.
const DefaultProfilesDir = config.DefaultDir

// ProfileOptions say what a session profiles, as deepprof profile's
// arguments do.
type ProfileOptions struct {
	// Profiles to compose (default stage2), from ProfilesDir ("": the
	// embedded defaults, with ./profiles over them when it exists).
	Profiles    []string
	ProfilesDir string
	// Overrides, as on the command line: key=value, +key=value,
	// group=name.
	Overrides []string
	// Command, when set, is the program to profile (deepprof profile --
	// CMD ARGS...).
	Command []string
	// Check runs the torch.profiler check too (timeline.oracle=true, which
	// an override still changes).
	Check bool
	// NoPreflight starts the session without the preflight's checks;
	// DryRun, which runs nothing, has them try the workload's imports too.
	// A dry run starts only programs found on PATH or given by the caller
	// (Overrides, Command): none that a profile file names by its path,
	// and none with an environment a profile file sets (see dryRunHolds).
	// Its session is for the plan: Run refuses it.
	NoPreflight, DryRun bool
	// Ncu is the profiler already found and probed (deepproftest's
	// Preflight); "" Path: ncu.path, else the one found on this machine.
	Ncu Tool
	// Log takes the session's notices; Progress its step lines, rewritten
	// in place where ProgressLive.
	Log, Progress io.Writer
	ProgressLive  bool
	// Now is the session's clock (nil: time.Now).
	Now func() time.Time
}

// Session is a profiling session composed and checked, not yet run.
type Session struct {
	cfg    *config.Config
	yaml   []byte
	o      ProfileOptions
	ncuErr error
	pre    session.PreflightResult
	s      *session.Session
	// script is where the default workload script embedded in the binary
	// is written for the session ("" when the workload is not it).
	script string
}

// NewProfile composes the session's configuration (profiles, then
// overrides, then the command), runs the preflight unless asked not to,
// and wires the session. A key or profile of the command line that cannot
// be used is an OptionError. The default workload script, from a folder
// that does not have it, is the copy embedded in the binary (said on Log),
// written to the user's cache by Prepare, unless DryRun: a dry run and
// WriteConfig write nothing.
func NewProfile(o ProfileOptions) (*Session, error) {
	ov := o.Overrides
	if o.Check {
		ov = append([]string{"timeline.oracle=true"}, ov...) // an override still wins
	}
	if o.Ncu.Path != "" {
		ov = append([]string{"ncu.path=" + o.Ncu.Path}, ov...)
	}
	cfg, err := config.Load(config.LoadOptions{Dir: o.ProfilesDir, Profiles: o.Profiles, Overrides: ov, Command: o.Command})
	if ce := (*config.Error)(nil); errors.As(err, &ce) && (ce.Source == config.SourceOverride || ce.Key == "profile") {
		return nil, &OptionError{err.Error()} // the command line's keys and profiles
	}
	if err != nil {
		return nil, err
	}
	var script string
	if o.Command == nil && len(cfg.Workload.Argv) > 0 {
		// The default workload script, from a directory that does not
		// have it: the copy embedded in the binary.
		p, embedded, err := deepprof.WorkloadPath(cfg.Workload.Argv[0], "")
		if err != nil {
			return nil, err
		}
		if embedded {
			cfg.Workload.Argv[0], script = p, p
			if o.Log != nil {
				fmt.Fprintf(o.Log, "deepprof: %s is not in this directory: the session runs the copy embedded in deepprof, written to %s when it starts\n", deepprof.WorkloadScript, p)
			}
		}
	}
	y, err := cfg.YAML()
	if err != nil {
		return nil, err
	}
	return &Session{cfg: cfg, yaml: y, o: o, script: script}, nil
}

// WriteConfig writes the composed configuration as YAML (what config.yaml
// of a run would hold, usable as a profile), then, as YAML comments, what
// was composed in order and where each key's value came from.
func (s *Session) WriteConfig(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# deepprof profile --print-config: the composed configuration\n")
	b.Write(s.yaml)
	b.WriteString("\n# composed, in order:\n")
	for _, src := range s.cfg.Sources {
		fmt.Fprintf(&b, "#   %s\n", src)
	}
	b.WriteString("# where each value came from:\n")
	width := 0
	for _, o := range s.cfg.Origins {
		width = max(width, len(o.Key))
	}
	for _, o := range s.cfg.Origins {
		fmt.Fprintf(&b, "#   %-*s  %s\n", width, o.Key, o.From)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// preflightProbes are the preflight's probes of the machine; tests replace
// them (UseTestMachine), so that goldens do not depend on the machine.
var preflightProbes = session.System

// Prepare finds the profiler, runs the preflight (unless NoPreflight) and
// wires the session; it runs nothing else. The methods below call it when
// it was not called; a second call does it again.
func (s *Session) Prepare() error {
	sel, err := session.Devices(s.cfg)
	if err != nil {
		return err
	}
	if s.script != "" && !s.o.DryRun {
		if err := deepprof.WriteWorkload(s.script); err != nil {
			return fmt.Errorf("the copy of %s embedded in deepprof: %w", deepprof.WorkloadScript, err)
		}
	}
	ncuPath := s.cfg.NCU.Path
	if ncuPath == "" {
		t, err := machine.Find("ncu", machine.EnvFromOS())
		if err != nil {
			s.ncuErr = err
			ncuPath = "ncu"
		} else {
			ncuPath = t.Path
		}
	}
	// A tool probed already (its version read) is not probed again, where
	// it is the one the session runs.
	var ncu *machine.Tool
	if o := s.o.Ncu; o.version != (machine.Version{}) && o.Path == ncuPath {
		ncu = &machine.Tool{Name: "ncu", Path: o.Path, Version: o.version}
	}
	var holds session.NotRun
	if s.o.DryRun {
		holds = dryRunHolds(s.cfg)
	}
	if !s.o.NoPreflight {
		in := preflightInput(s.cfg, ncuPath, s.ncuErr, s.o.DryRun)
		in.NotRun = holds
		if s.script != "" && s.o.DryRun {
			// Not written by a dry run: it is the binary's own.
			in.Files = slices.DeleteFunc(in.Files, func(f string) bool { return f == s.script })
			in.Written = []string{s.script}
		}
		s.pre = session.Run(context.Background(), in, preflightProbes(sel))
		if ncu == nil {
			ncu = s.pre.Ncu
		}
	}
	s.s, err = newSession(s.cfg, sessionOptions{NcuPath: ncuPath, Ncu: ncu, Log: s.o.Log, Progress: s.o.Progress,
		ProgressLive: s.o.ProgressLive, Now: s.o.Now})
	if err != nil {
		return err
	}
	if s.o.DryRun {
		s.s.NsysNotRun = heldPath(s.cfg, "nsys.path", s.cfg.Nsys.Path).why()
	}
	return nil
}

// dryRunHolds are the preflight's programs a dry run does not start: ncu
// when a profile file names it by its path (ncu.path), the import check
// when a profile file names the interpreter by its path (workload.python,
// workload.argv) or sets any of its environment (workload.env: a
// PYTHONPATH holding a sitecustomize.py runs code, and so do LD_PRELOAD and
// the like). A dry run is how one looks at what a checkout's profiles would
// do before running them: it runs what the caller named and what is found
// on PATH, never a path or an environment from a file.
func dryRunHolds(cfg *config.Config) session.NotRun {
	var nr session.NotRun
	if h := heldPath(cfg, "ncu.path", cfg.NCU.Path); h != nil {
		nr.Ncu = &session.Held{Why: h.why(), Fix: h.fix()}
	}
	argv := cfg.Workload.Command()
	if len(argv) == 0 {
		return nr
	}
	key := "workload.argv"
	if len(argv) > len(cfg.Workload.Argv) {
		key = "workload.python" // put before a .py script
	}
	if h := heldPath(cfg, key, argv[0]); h != nil {
		nr.Imports = &session.Held{Why: h.why(), Fix: h.fix()}
		return nr
	}
	var keys, fixes []string
	var at string
	for _, o := range cfg.Origins {
		if name, ok := strings.CutPrefix(o.Key, "workload.env."); ok && o.InFile {
			if at == "" {
				at = o.From
			}
			keys = append(keys, o.Key)
			fixes = append(fixes, o.Key+"="+cfg.Workload.Env[name])
		}
	}
	if len(keys) > 0 {
		are := "is"
		if len(keys) > 1 {
			are = "are"
		}
		nr.Imports = &session.Held{
			Why: fmt.Sprintf("%s %s from a profile file (%s), and a dry run starts no program with an environment a profile file sets",
				strings.Join(keys, ", "), are, at),
			Fix: fmt.Sprintf("to have it checked, give the environment on the command line (%s)", strings.Join(fixes, " "))}
	}
	return nr
}

// held is a program a dry run does not start: key's value, path, from a
// profile file (at).
type held struct{ key, path, at string }

// heldPath is the program at path, key's value, when a dry run does not
// start it: a profile file outside the binary names it by its path. A
// name alone is looked up on PATH, as the user's shell would; nil when it
// may run.
func heldPath(cfg *config.Config, key, path string) *held {
	at := cfg.SetInFile(key)
	if at == "" || path == "" || !strings.ContainsRune(path, filepath.Separator) {
		return nil
	}
	return &held{key, path, at}
}

func (h *held) why() string {
	if h == nil {
		return ""
	}
	return fmt.Sprintf("%s is from a profile file (%s), and a dry run starts no program a profile file names by its path", h.key, h.at)
}

func (h *held) fix() string {
	value := h.path
	if h.key == "workload.argv" {
		value = "[" + h.path + ", ...]"
	}
	return fmt.Sprintf("to have it checked, give it on the command line (%s=%s), or run it yourself", h.key, value)
}

// prepared is Prepare, made once: the methods below call it when their
// caller did not.
func (s *Session) prepared() error {
	if s.s != nil {
		return nil
	}
	return s.Prepare()
}

// WritePreflight writes what the preflight found (nothing when it did not
// run).
func (s *Session) WritePreflight(w io.Writer) error {
	if err := s.prepared(); err != nil {
		return err
	}
	if s.o.NoPreflight {
		return nil
	}
	return s.pre.Write(w)
}

// Ready is why the session cannot start (a preflight check that failed, no
// ncu), or nil.
func (s *Session) Ready() error {
	if err := s.prepared(); err != nil {
		return err
	}
	if !s.o.NoPreflight {
		if err := s.pre.Err(); err != nil {
			return err
		}
	}
	return s.ncuErr
}

// WritePlan writes the dry run's answer: MAIN, then every step's argv,
// outputs and deadline.
func (s *Session) WritePlan(w io.Writer) error {
	if err := s.prepared(); err != nil {
		return err
	}
	main := s.cfg.Run.Root + "/" + s.cfg.Run.ID
	if s.cfg.Run.ID == "" {
		main = s.cfg.Run.Root + "/<run id>"
	}
	steps, err := s.s.Plan(main, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "MAIN: %s\n", main)
	return session.FormatPlan(w, steps)
}

// runSession runs a wired session; tests replace it.
var runSession = func(ctx context.Context, s *session.Session) (*Run, error) {
	run, err := s.Run(ctx)
	if run == nil {
		return nil, err
	}
	return &Run{run}, err
}

// Run runs the session into a new run directory and returns it (nil when
// none could be made) with the session's error. When ctx ends (Ctrl-C),
// the step running is stopped, what was done is kept, and the manifest
// says the run was interrupted.
func (s *Session) Run(ctx context.Context) (*Run, error) {
	if s.o.DryRun {
		return nil, errors.New("a dry run's session is for its plan: it runs nothing")
	}
	if err := s.prepared(); err != nil {
		return nil, err
	}
	return runSession(ctx, s.s)
}

// preflightInput is what the session will need: the profiler, the
// workload's argv and environment, and the files it reads (its .py
// scripts and workload.inputs, relative to the working directory). Only a
// dry run tries the workload's imports: a session's first step does.
func preflightInput(cfg *config.Config, ncuPath string, ncuErr error, dry bool) session.Input {
	argv := cfg.Workload.Command()
	var files []string
	for _, a := range argv {
		if filepath.Ext(a) == ".py" {
			files = append(files, a)
		}
	}
	files = append(files, cfg.Workload.Inputs...)
	var env []string
	for _, k := range slices.Sorted(maps.Keys(cfg.Workload.Env)) {
		env = append(env, k+"="+cfg.Workload.Env[k])
	}
	return session.Input{Ncu: ncuPath, NcuErr: ncuErr, Workload: argv, Env: env, Files: files, CheckImports: dry}
}
