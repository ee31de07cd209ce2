package ncu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Progress event kinds.
const (
	ProgressKernel       = "kernel"       // a launch being (or done being) profiled
	ProgressConnected    = "connected"    // ncu attached to a process
	ProgressDisconnected = "disconnected" // a process ended
	ProgressReport       = "report"       // ncu wrote its report
)

// Progress is one event of ncu's console output.
type Progress struct {
	Kind    string // one of the Progress constants
	Kernel  string // kernel name as printed (ncu shortens long ones with "...")
	Index   int    // the launch's 0-based index in ncu's count
	Passes  int    // replay passes it took; 0 while not done
	Done    bool   // the launch's line reached "100% - N pass(es)"
	PID     int    // connected, disconnected
	Exe     string // connected: the process's executable
	Report  string // report: the report path
	RawLine string // the line as given
}

var (
	// With a kernel filter, ncu (2025.3.1) leaves out " - N":
	// `==PROF== Profiling "nvjet_sm90_tst_64x32_64x16_1x2_h_bz_TNT": 0%....50%....100% - 10 passes`.
	// With --launch-count it adds the count: ` - 498 (499/500): `.
	profilingLine = regexp.MustCompile(`^==PROF== Profiling "(.*)"(?: - (\d+)(?: \(\d+/\d+\))?)?: ([0-9%.]*)(?: - (\d+) pass(?:es)?)?\s*$`)
	connectedLine = regexp.MustCompile(`^(?:==PROF== )?Connected to process (\d+) \((.*)\)\s*$`)
	disconnLine   = regexp.MustCompile(`^(?:==PROF== )?Disconnected from process (\d+)\s*$`)
)

// ParseProgress reads one line of ncu's console output:
//
//	==PROF== Profiling "nvjet_sm90_tst_8x64_64x16_4x1..." - 21: 0%....50%....100% - 1 pass
//	==PROF== Connected to process 588 (/usr/bin/python3.12)
//	==PROF== Disconnected from process 588
//	==PROF== Report: out/a.ncu-rep
//
// A profiling line cut short ("... - 21: 0%....50%") is an event that is not
// Done. Any other line gives false.
func ParseProgress(line string) (Progress, bool) {
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	if m := profilingLine.FindStringSubmatch(line); m != nil {
		idx := -1 // no index printed
		if m[2] != "" {
			var err error
			if idx, err = strconv.Atoi(m[2]); err != nil {
				return Progress{}, false
			}
		}
		p := Progress{Kind: ProgressKernel, Kernel: m[1], Index: idx, RawLine: line}
		if m[4] != "" {
			p.Passes, _ = strconv.Atoi(m[4])
			p.Done = strings.HasSuffix(m[3], "100%")
		}
		return p, true
	}
	if m := connectedLine.FindStringSubmatch(line); m != nil {
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			return Progress{}, false
		}
		return Progress{Kind: ProgressConnected, PID: pid, Exe: m[2], RawLine: line}, true
	}
	if m := disconnLine.FindStringSubmatch(line); m != nil {
		pid, err := strconv.Atoi(m[1])
		if err != nil {
			return Progress{}, false
		}
		return Progress{Kind: ProgressDisconnected, PID: pid, RawLine: line}, true
	}
	if m := reportLine.FindStringSubmatch(line); m != nil {
		return Progress{Kind: ProgressReport, Report: m[1], RawLine: line}, true
	}
	return Progress{}, false
}

// ProgressLine accumulates progress events and renders a one-line status,
// "ncu: 37 launches profiled, current: Kernel2, 12.3s". Its clock is
// injected, so tests are deterministic.
type ProgressLine struct {
	now       func() time.Time
	start     time.Time
	launches  int // done
	current   string
	processes map[int]string // connected, not yet disconnected
	report    string
}

// NewProgressLine starts a status line; elapsed time counts from now().
func NewProgressLine(now func() time.Time) *ProgressLine {
	return &ProgressLine{now: now, start: now(), processes: map[int]string{}}
}

// Add records one event.
func (p *ProgressLine) Add(ev Progress) {
	switch ev.Kind {
	case ProgressKernel:
		p.current = ev.Kernel
		if ev.Done {
			p.launches++
		}
	case ProgressConnected:
		p.processes[ev.PID] = ev.Exe
	case ProgressDisconnected:
		delete(p.processes, ev.PID)
	case ProgressReport:
		p.report = ev.Report
	}
}

// Feed parses line and records it when it is an event; it reports whether it was.
func (p *ProgressLine) Feed(line string) bool {
	ev, ok := ParseProgress(line)
	if ok {
		p.Add(ev)
	}
	return ok
}

// Launches is the number of launches profiled to completion.
func (p *ProgressLine) Launches() int { return p.launches }

// String renders the status line: "ncu: " and Status.
func (p *ProgressLine) String() string { return "ncu: " + p.Status() }

// Status renders the status: "37 launches profiled, current: Kernel2,
// 12.3s".
func (p *ProgressLine) Status() string {
	var b strings.Builder
	if p.launches == 1 {
		b.WriteString("1 launch profiled")
	} else {
		fmt.Fprintf(&b, "%d launches profiled", p.launches)
	}
	if p.current != "" {
		b.WriteString(", current: " + p.current)
	} else if len(p.processes) > 0 {
		fmt.Fprintf(&b, ", %d process(es) attached", len(p.processes))
	}
	if p.report != "" {
		b.WriteString(", report: " + p.report)
	}
	fmt.Fprintf(&b, ", %.1fs", p.now().Sub(p.start).Seconds())
	return b.String()
}
