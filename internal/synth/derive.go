package synth

import (
	"bytes"
	"strconv"
	"strings"
)

// Derived recordings: SYNTHETIC inputs made from a real one (a recorded
// fixture, read by the caller) by leaving lines out, every kept line as
// recorded. Tests use them for program shapes no recording was made of.

// WithoutNVTX is rec without its NVTX records (N lines): a program that
// opened no NVTX range, its GPU work and launch calls as recorded.
func WithoutNVTX(rec []byte) []byte {
	return keep(rec, func(kind byte) bool { return kind != 'N' })
}

// WithoutActivity is rec with only its header, notes (X) and end line (E):
// a process that loaded CUDA (and so the library) and launched, copied and
// pushed nothing.
func WithoutActivity(rec []byte) []byte {
	return keep(rec, func(kind byte) bool { return kind == '#' || kind == 'X' || kind == 'E' })
}

// keep is the lines of rec whose first byte ok accepts, its end line (E)
// counting the records kept, as the library counts what it wrote.
func keep(rec []byte, ok func(kind byte) bool) []byte {
	var out []byte
	records := 0
	for line := range bytes.Lines(rec) {
		if !ok(line[0]) {
			continue
		}
		switch line[0] {
		case '#':
		case 'E':
			if f := strings.Split(strings.TrimRight(string(line), "\n"), "\t"); len(f) == 3 {
				f[1] = strconv.Itoa(records)
				line = []byte(strings.Join(f, "\t") + "\n")
			}
		default:
			records++
		}
		out = append(out, line...)
	}
	return out
}
