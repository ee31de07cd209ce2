package session

import (
	"context"
	"fmt"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/config"
	"github.com/llm-perf-opt/deepprof/internal/rundir"
)

// StepID names a step of the session. Its text is the step's name in the
// dry run and in the manifest's steps.
type StepID string

// The steps a session may run, in the order they run.
const (
	StepNcuSections        StepID = "ncu-sections"
	StepStage1             StepID = "stage1"
	StepNsysProfile        StepID = "nsys-profile"
	StepNsysExportSQLite   StepID = "nsys-export-sqlite"
	StepNsysStats          StepID = "nsys-stats"
	StepNsysStatsBase      StepID = "nsys-stats-base"
	StepCupti              StepID = "timeline-cupti"        // the plain run with deepprof's CUPTI library
	StepOracle             StepID = "oracle-torch-profiler" // a plain run under torch.profiler: the independent check
	StepNcuTiming          StepID = "ncu-timing"
	StepExportTimingRaw    StepID = "export-timing-raw"
	StepNcuDiscovery       StepID = "ncu-discovery" // only when the timing pass's NVTX filter matched nothing
	StepExportDiscoveryRaw StepID = "export-discovery-raw"
	StepNcuDeep            StepID = "ncu-deep"
	StepExportRaw          StepID = "export-raw"
	StepExportDetails      StepID = "export-details"
)

// index returns the steps by ID.
func index(steps []Step) map[StepID]Step {
	m := make(map[StepID]Step, len(steps))
	for _, st := range steps {
		m[st.ID] = st
	}
	return m
}

// The configuration keys that hold step deadlines.
const (
	keyWorkloadTimeout = "workload.timeout"
	keyNcuTimeout      = "ncu.timeout"
	keyNsysTimeout     = "nsys.timeout"
)

// Deadline is how long a step may run, and the configuration key that says
// so. At the deadline the step's process group is stopped (see ExecRunner:
// SIGINT, then SIGKILL after its grace), what it wrote is kept, and the run
// is marked partial.
type Deadline struct {
	Key   string          // the configuration key, such as "workload.timeout"
	Value config.Duration // as configured; "" is no deadline
}

// After is the deadline as a duration; 0 is none.
func (d Deadline) After() time.Duration { return d.Value.Std() }

func (d Deadline) String() string {
	if d.After() <= 0 {
		return fmt.Sprintf("none (%s is %q)", d.Key, string(d.Value))
	}
	return fmt.Sprintf("%s (%s)", d.Value, d.Key)
}

// deadline is the rule for step deadlines, by what the step runs:
//
//   - the workload alone (stage 1) gets workload.timeout, which bounds one
//     run of the workload (all of workload.repeats happen in that run);
//   - every step ncu runs gets ncu.timeout: the passes, which run the
//     workload under ncu, and also the exports of their reports and
//     --list-sections. An export reads what its pass wrote and takes a
//     fraction of the pass's time (the 8B-shaped run: 33 s after a 130 s
//     timing pass, fixtures/README.md), so the pass's bound bounds it too;
//     a key of its own would be one more to tune with nothing gained;
//   - every step nsys runs gets nsys.timeout: nsys profile runs the workload
//     under nsys, and its export and stats read that report, as an ncu
//     export does. Not workload.timeout: nsys also writes its report after
//     the workload ends, which a deadline for the workload alone does not
//     allow for; not ncu.timeout: the ncu presets size theirs for ncu's
//     replay (roofline 45m, full 90m), which nsys does not do.
//
// A step not named here has no deadline; TestEveryStepHasADeadline keeps
// that from happening unnoticed.
func (s *Session) deadline(id StepID) Deadline {
	switch id {
	case StepStage1, StepCupti, StepOracle:
		// The CUPTI and oracle runs are the plain run with light tracing:
		// the workload's own bound fits them.
		return Deadline{Key: keyWorkloadTimeout, Value: s.Cfg.Workload.Timeout}
	case StepNcuSections, StepNcuTiming, StepExportTimingRaw, StepNcuDiscovery, StepExportDiscoveryRaw,
		StepNcuDeep, StepExportRaw, StepExportDetails:
		return Deadline{Key: keyNcuTimeout, Value: s.Cfg.NCU.Timeout}
	case StepNsysProfile, StepNsysExportSQLite, StepNsysStats, StepNsysStatsBase:
		return Deadline{Key: keyNsysTimeout, Value: s.Cfg.Nsys.Timeout}
	}
	return Deadline{}
}

// withDeadlines sets each step's deadline by the rule of deadline.
func (s *Session) withDeadlines(steps []Step) []Step {
	for i := range steps {
		steps[i].Deadline = s.deadline(steps[i].ID)
	}
	return steps
}

// stoppedError is a step stopped before it ended by itself: the session's
// context ended (Ctrl-C), or the step reached its deadline.
type stoppedError struct {
	step     string
	after    time.Duration
	deadline Deadline // the deadline reached; Key "" when interrupted
	log      string   // the step's log, relative to MAIN ("" for none)
}

func (e *stoppedError) timedOut() bool { return e.deadline.Key != "" }

// how is the manifest's word for how the step ended (StepTime.Stopped).
func (e *stoppedError) how() rundir.Stop {
	if e.timedOut() {
		return rundir.StopTimedOut
	}
	return rundir.StopInterrupted
}

func (e *stoppedError) Error() string {
	if e.timedOut() {
		return fmt.Sprintf("%s timed out: stopped at its deadline, %s", e.step, e.deadline)
	}
	return fmt.Sprintf("%s interrupted after %s", e.step, e.after.Round(time.Millisecond))
}

// reason is why the run is partial, with what to do next.
func (e *stoppedError) reason() string {
	if !e.timedOut() {
		return fmt.Sprintf("interrupted during %s (stopped after %s); the steps before it are kept", e.step, e.after.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s timed out: stopped at its deadline, %s; the steps before it are kept. Next: %s", e.step, e.deadline, e.next())
}

// next is what to do about a deadline reached, by the key that set it.
func (e *stoppedError) next() string {
	raise := fmt.Sprintf("raise %s (now %s)", e.deadline.Key, e.deadline.Value)
	seeLog := ""
	if e.log != "" {
		seeLog = fmt.Sprintf("; %s shows how far it got", e.log)
	}
	switch e.deadline.Key {
	case keyWorkloadTimeout:
		return raise + ", or find out why the workload hangs" + seeLog
	case keyNcuTimeout:
		return raise + ", or give ncu less to profile: narrower nvtx.include, fewer kernels (timeline.coverage, timeline.max_kernels), fewer launches (ncu.per_kernel_launches), a lighter set (ncu=default)" + seeLog
	case keyNsysTimeout:
		return raise + ", or time the run with an ncu timing pass instead (timeline.tool=ncu)" + seeLog
	}
	return raise + seeLog
}

// what says how the step ended: "interrupted", or "timed out at its
// deadline, 30m (ncu.timeout)".
func (e *stoppedError) what() string {
	if e.timedOut() {
		return "timed out at its deadline, " + e.deadline.String()
	}
	return "interrupted"
}

// short is what for a status line: "interrupted", "timed out (30m,
// ncu.timeout)".
func (e *stoppedError) short() string {
	if e.timedOut() {
		return fmt.Sprintf("timed out (%s, %s)", e.deadline.Value, e.deadline.Key)
	}
	return "interrupted"
}

// note is the manifest's note on a stopped step whose log is not
// diagnosed: the log ends where the program was stopped, and what ncu
// prints then ("No kernels were profiled.") is no finding about filters.
func (e *stoppedError) note() string {
	what := e.what()
	if e.log == "" {
		return fmt.Sprintf("%s: %s", e.step, what)
	}
	return fmt.Sprintf("%s: %s; %s is kept as it was when the step was stopped, and not diagnosed: what a stopped program prints (ncu: \"No kernels were profiled.\") is no fault of its settings",
		e.step, what, e.log)
}

// stopContext is ctx bounded by d; timedOut then reports whether the
// context ended at d rather than with ctx (Ctrl-C).
func stopContext(ctx context.Context, d Deadline) (c context.Context, cancel context.CancelFunc, timedOut func() bool) {
	if d.After() <= 0 {
		c, cancel = context.WithCancel(ctx)
		return c, cancel, func() bool { return false }
	}
	c, cancel = context.WithTimeout(ctx, d.After())
	return c, cancel, func() bool { return ctx.Err() == nil && c.Err() == context.DeadlineExceeded }
}
