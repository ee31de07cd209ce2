package session

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/llm-perf-opt/deepprof/internal/ncu"
)

// liveEvery is the least time between two rewrites of a live status line.
const liveEvery = 250 * time.Millisecond

// liveWidth caps a live status line, so that it never wraps on an
// 80-column terminal (a wrapped line cannot be rewritten with "\r").
const liveWidth = 79

// maxLine is the longest partial line kept while waiting for its end; a
// longer one is fed as it is.
const maxLine = 64 << 10

// progress is the io.Writer that an ncu pass's output goes through (beside
// its log): it splits the output into lines, feeds them to an
// ncu.ProgressLine and writes the status to out. Live, the status rewrites
// one line with "\r" at most every liveEvery; otherwise only Close writes,
// one summary line.
type progress struct {
	name  string
	out   io.Writer
	live  bool
	now   func() time.Time
	start time.Time

	mu      sync.Mutex // Write may be called from a stdout and a stderr copier
	line    *ncu.ProgressLine
	partial []byte
	last    time.Time // of the last live write
	wrote   bool      // a live line is on the screen
	width   int       // its length, to blank what a shorter line leaves
	stopped string    // how the pass was stopped ("" when it ended by itself)
}

func newProgress(name string, out io.Writer, live bool, now func() time.Time) *progress {
	return &progress{name: name, out: out, live: live, now: now, start: now(), line: ncu.NewProgressLine(now)}
}

// Write feeds every complete line of p; it never fails, so that the log
// beside it is always written whole.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	rest := p.partial
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		p.feed(string(rest[:i]))
		rest = rest[i+1:]
	}
	if len(rest) > maxLine {
		p.feed(string(rest))
		rest = nil
	}
	p.partial = append(p.partial[:0], rest...)
	return len(b), nil
}

func (p *progress) feed(line string) {
	if !p.line.Feed(line) || !p.live {
		return
	}
	t := p.now()
	if p.wrote && t.Sub(p.last) < liveEvery {
		return
	}
	p.last = t
	p.show(p.name + ": " + p.line.Status())
}

// show rewrites the live line.
func (p *progress) show(s string) {
	if r := []rune(s); len(r) > liveWidth {
		s = string(r[:liveWidth-3]) + "..."
	}
	n := len([]rune(s))
	pad := ""
	if p.width > n {
		pad = strings.Repeat(" ", p.width-n)
	}
	fmt.Fprintf(p.out, "\r%s%s", s, pad)
	p.wrote, p.width = true, n
}

// Stopped says, before Close, that the session stopped the pass, and how
// ("interrupted", "timed out (30m, ncu.timeout)"): the summary line then
// says so after the launches counted.
func (p *progress) Stopped(how string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = how
}

// Close feeds what is left of the last line and writes the pass's
// summary line, "ncu-deep: 412 launches profiled in 12.3s", in place of
// the live line if there is one; for a stopped pass, "ncu-deep: 3
// launches profiled in 1800.0s, then timed out (30m, ncu.timeout)".
func (p *progress) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.partial) > 0 {
		p.feed(string(p.partial))
		p.partial = nil
	}
	n := p.line.Launches()
	launches := fmt.Sprintf("%d launches", n)
	if n == 1 {
		launches = "1 launch"
	}
	summary := fmt.Sprintf("%s: %s profiled in %.1fs", p.name, launches, p.now().Sub(p.start).Seconds())
	if p.stopped != "" {
		summary += ", then " + p.stopped
	}
	if p.wrote {
		p.show(summary)
	} else {
		io.WriteString(p.out, summary)
	}
	_, err := io.WriteString(p.out, "\n")
	return err
}
