package ncu

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Finding kinds: what Diagnose recognized in ncu's console output.
const (
	KindNVTXNoMatch            = "nvtx-no-match"            // NVTX include expressions matched no kernel
	KindNoKernels              = "no-kernels"               // no kernel profiled, for another reason
	KindNoRanges               = "no-ranges"                // range replay found no range to profile
	KindRangeReplayUnsupported = "range-replay-unsupported" // range replay hit an API it cannot capture
	KindAppRangeMismatch       = "app-range-mismatch"       // app-range replay saw different kernels in different passes
	KindCounterPermission      = "counter-permission"       // ERR_NVGPUCTRPERM
	KindWorkloadCrash          = "workload-crash"           // the workload exited with an error
	KindNoReportWithLogFile    = "no-report-with-log-file"  // a --log-file capture next to -o: no CSV in it
	KindProcessProfileFailed   = "process-profile-failed"   // ncu failed to profile a kernel in one process
)

// Finding is one problem Diagnose recognized.
type Finding struct {
	Kind    string // one of the Kind constants
	Line    int    // 1-based line in the log
	Text    string // the line matched (for a workload crash: the workload's last lines, then it)
	Message string // what happened
	Next    string // what to try
}

// maxCrashLines is how many of the workload's last lines a workload-crash
// finding keeps.
const maxCrashLines = 20

var (
	errorCode     = regexp.MustCompile(`^==ERROR== The application returned an error code \((-?\d+)\)`)
	failedProfile = regexp.MustCompile(`^==ERROR== Failed to profile (.*) in process (\d+)`)
	reportLine    = regexp.MustCompile(`^==PROF== Report: (.+)$`)
	toolLine      = regexp.MustCompile(`^==[A-Z]+==`)
)

// Diagnose reads ncu's console output (what it printed on stdout and stderr,
// with the workload's own output mixed in, and, when the log was written by
// a shell with set -x, the "+ ncu ..." command line) and returns the
// problems it recognizes, in line order. It knows only the log: the NVTX
// expressions it discusses are those of the last "+ ncu" command line
// before the warning, when there is one. A clean log gives none.
func Diagnose(log []byte) []Finding {
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	var (
		out      []Finding
		command  []string // argv of the last "+ ncu" line
		shutdown bool     // ncu said it is shutting the application down
		profProf int      // ==PROF== Profiling lines
		other    int      // non-blank lines that are not ==PROF==
		report   int      // line of the last ==PROF== Report:, 0 for none
	)
	for i, l := range lines {
		n := i + 1
		add := func(kind, msg, next string) {
			out = append(out, Finding{Kind: kind, Line: n, Text: l, Message: msg, Next: next})
		}
		if argv, ok := ncuCommand(l); ok {
			command = argv
		}
		switch {
		case strings.HasPrefix(l, "==PROF== Profiling "):
			profProf++
		case reportLine.MatchString(l):
			report = n
		case strings.HasPrefix(l, "==PROF== Trying to shutdown target application"):
			shutdown = true
		case strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "==PROF=="):
			other++
		}

		switch {
		case strings.HasPrefix(l, "==WARNING== No kernels were profiled."):
			if i+1 < len(lines) && strings.Contains(lines[i+1], "NVTX include expressions") {
				msg, next := nvtxNoMatch(command)
				add(KindNVTXNoMatch, msg, next)
				continue
			}
			msg := "ncu profiled no kernel and wrote no report"
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "==WARNING== ") {
				msg += ": " + strings.TrimPrefix(lines[i+1], "==WARNING== ")
			}
			add(KindNoKernels, msg,
				"check that the workload launches CUDA kernels, that --target-processes all is set when it starts child processes, and that the kernel filters (--kernel-name, --kernel-id, --launch-skip) can match")
		case strings.HasPrefix(l, "==WARNING== No ranges were profiled."):
			add(KindNoRanges, "range replay profiled no range and wrote no report: it profiles only the NVTX ranges named with --nvtx-include (or cu(da)ProfilerStart/Stop ranges)",
				"name the push/pop ranges to replay with --nvtx-include \"range/\", or use kernel replay with --nvtx")
		case strings.Contains(l, "Unsupported API during capture"):
			add(KindRangeReplayUnsupported, "range replay cannot capture this range: the code inside it calls a CUDA API that range capture does not support, so the range was skipped",
				"fall back to kernel replay (--replay-mode kernel) with --nvtx: the NVTX stack column of each launch gives the per-region numbers")
		case strings.Contains(l, "Unexpected number of profiled kernels"):
			add(KindAppRangeMismatch, "application-range replay saw a different set of kernels in different application passes, so it cannot combine them",
				"fall back to kernel replay with --nvtx (per-region numbers from the NVTX stack column), or make the workload deterministic and try --app-replay-match")
		case strings.Contains(l, "ERR_NVGPUCTRPERM"):
			add(KindCounterPermission, "the user running ncu may not read the GPU performance counters (restricted to admin users by the driver)",
				"run ncu as root or with CAP_SYS_ADMIN (CAP_PERFMON from driver R565), start a container with --cap-add=SYS_ADMIN, or have an administrator load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0; see https://developer.nvidia.com/ERR_NVGPUCTRPERM")
		case failedProfile.MatchString(l):
			m := failedProfile.FindStringSubmatch(l)
			add(KindProcessProfileFailed, fmt.Sprintf("ncu failed to profile kernel %s in process %s; the report, if written, holds what was profiled before", input.EscapeName(m[1]), m[2]),
				"profile one process at a time: stop other GPU work and other ncu runs on this GPU, or run the workload with a single worker process")
		case errorCode.MatchString(l):
			if shutdown {
				continue // ncu stopped it, after an error reported above
			}
			out = append(out, crash(lines, i, errorCode.FindStringSubmatch(l)[1]))
		}
	}
	if profProf == 0 && other == 0 && report > 0 {
		l := lines[report-1]
		path := reportLine.FindStringSubmatch(l)[1]
		out = append(out, Finding{Kind: KindNoReportWithLogFile, Line: report, Text: l,
			Message: fmt.Sprintf("this log holds only ==PROF== lines: with -o, ncu writes its data to the report %s, not as CSV into the --log-file", path),
			Next:    fmt.Sprintf("export the report: ncu --import %s --csv --page raw (and --page details)", path)})
	}
	for i := range out {
		if out[i].Kind == KindWorkloadCrash && report > out[i].Line {
			out[i].Message += fmt.Sprintf("; ncu still wrote %s with the launches profiled before", reportLine.FindStringSubmatch(lines[report-1])[1])
		}
	}
	return out
}

// crash builds the workload-crash finding for the error-code line i.
func crash(lines []string, i int, code string) Finding {
	var tail []string
	exception := ""
	for j := i - 1; j >= 0 && len(tail) < maxCrashLines; j-- {
		l := lines[j]
		if toolLine.MatchString(l) || strings.TrimSpace(l) == "" {
			continue
		}
		tail = append(tail, l)
	}
	for j := i - 1; j >= 0; j-- {
		l := lines[j]
		if strings.HasPrefix(l, "Traceback (most recent call last)") {
			break
		}
		if exception == "" && l != "" && l[0] != ' ' && l[0] != '\t' && !toolLine.MatchString(l) {
			exception = l
		}
	}
	if !hasTraceback(lines[:i]) {
		exception = ""
	}
	for a, b := 0, len(tail)-1; a < b; a, b = a+1, b-1 {
		tail[a], tail[b] = tail[b], tail[a]
	}
	msg := "the workload exited with status " + code
	if exception != "" {
		msg += ", after a Python exception: " + input.EscapeHidden(exception)
	}
	return Finding{Kind: KindWorkloadCrash, Line: i + 1,
		Text:    strings.Join(append(tail, lines[i]), "\n"),
		Message: msg,
		Next:    "run the workload without ncu first (stage 1) and fix it; its last lines are above"}
}

func hasTraceback(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "Traceback (most recent call last)") {
			return true
		}
	}
	return false
}

// nvtxNoMatch explains an NVTX filter that matched nothing, using the
// --nvtx-include expressions of the command line when known.
func nvtxNoMatch(command []string) (msg, next string) {
	includes := optionValues(command, "--nvtx-include")
	msg = "the NVTX include expressions matched no kernel, so ncu profiled nothing and wrote no report"
	if len(includes) > 0 {
		msg = fmt.Sprintf("the NVTX include expressions %s matched no kernel, so ncu profiled nothing and wrote no report", quoteAll(includes))
	}
	next = "list the ranges the workload really pushes (a kernel-replay run with --nvtx and no include shows each launch's NVTX stack), and end an expression for push/pop ranges with '/'"
	for _, e := range includes {
		if i := unescapedAt(e); i >= 0 {
			next = fmt.Sprintf("'%s' reads '%s' as an NVTX domain: if the range is a default-domain range whose name holds '@', write '%s'; otherwise ",
				e, e[:i], e[:i]+`\@`+e[i+1:]) + next
			break
		}
	}
	return msg, next
}

// unescapedAt returns the index of the first '@' in e not preceded by '\', or -1.
func unescapedAt(e string) int {
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '\\':
			i++
		case '@':
			return i
		}
	}
	return -1
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// optionValues returns the values of opt in argv, given as "opt value" or
// "opt=value".
func optionValues(argv []string, opt string) []string {
	var vs []string
	for i := 0; i < len(argv); i++ {
		switch {
		case argv[i] == opt && i+1 < len(argv):
			vs = append(vs, argv[i+1])
			i++
		case strings.HasPrefix(argv[i], opt+"="):
			vs = append(vs, strings.TrimPrefix(argv[i], opt+"="))
		}
	}
	return vs
}

// ncuCommand reads a shell trace line ("+ ncu ...", "++ timeout 100 ncu
// ...") that runs ncu and returns its words.
func ncuCommand(line string) ([]string, bool) {
	if !strings.HasPrefix(line, "+") {
		return nil, false
	}
	words := shellWords(strings.TrimLeft(line, "+"))
	for _, w := range words {
		if filepath.Base(w) == "ncu" {
			return words, true
		}
	}
	return nil, false
}

// shellWords splits a line the way set -x quotes it: words separated by
// blanks, with '…' (literal), "…" (backslash escapes ", \, $, `) and a
// backslash outside quotes escaping the next character.
func shellWords(s string) []string {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				cur.WriteString(s[i+1:])
				i = len(s)
				break
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			cur.WriteByte(s[i])
		default:
			in = true
			cur.WriteByte(c)
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
