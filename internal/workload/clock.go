package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ClockPrefix starts the line a program prints for each generate with its
// own clock (scripts/corpus/clock.py writes it; a C++ program prints the
// same): the reference deepprof's serving figures are checked against.
const ClockPrefix = "deepprof-clock "

// Clock is one generate as the program's own clock read it: host timers
// read once each token was on the host (after a synchronize). TTFT runs
// from the call to the first token, TPOT is the mean gap between the
// tokens after it ((last - first) / steps).
type Clock struct {
	Line     int      `json:"-"`
	Program  string   `json:"program"`
	Generate int      `json:"generate"`
	Tokens   int      `json:"tokens"`
	Steps    int      `json:"steps"`
	Batch    int      `json:"batch"`
	TTFTMS   float64  `json:"ttft_ms"`
	TPOTMS   *float64 `json:"tpot_ms"`
	Rank     *int     `json:"rank,omitempty"`
	World    int      `json:"world,omitempty"`
}

// ReadClock reads the clock lines of a program's output (a workload.log):
// every other line is the program's and is skipped. A clock line that is
// not one is an error positioned at its line (name:line: what); only the
// first such error is returned, with the lines read before it.
func ReadClock(r io.Reader, name string) ([]Clock, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []Clock
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, ClockPrefix) {
			continue
		}
		var c Clock
		dec := json.NewDecoder(bytes.NewReader([]byte(strings.TrimPrefix(line, ClockPrefix))))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return out, fmt.Errorf("%s:%d: not a clock line: %w", name, n, err)
		}
		if dec.More() {
			return out, fmt.Errorf("%s:%d: not a clock line: more after its JSON object", name, n)
		}
		switch {
		case c.Steps < 0 || c.Tokens < 1 || c.Steps != c.Tokens-1:
			return out, fmt.Errorf("%s:%d: tokens %d and steps %d: want steps = tokens - 1 >= 0", name, n, c.Tokens, c.Steps)
		case !(c.TTFTMS >= 0 && finite(c.TTFTMS)):
			return out, fmt.Errorf("%s:%d: ttft_ms %v: want a finite time of at least 0", name, n, c.TTFTMS)
		case c.TPOTMS != nil && !(*c.TPOTMS >= 0 && finite(*c.TPOTMS)):
			return out, fmt.Errorf("%s:%d: tpot_ms %v: want a finite time of at least 0", name, n, *c.TPOTMS)
		case c.TPOTMS == nil && c.Steps > 0:
			return out, fmt.Errorf("%s:%d: no tpot_ms for %d steps", name, n, c.Steps)
		}
		c.Line = n
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
