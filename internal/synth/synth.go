package synth

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// RepeatRows returns a reader of the raw page's first two lines (header and
// units) followed by its remaining lines repeated, whole, until at least size
// bytes have been produced. Each repeated row gets a new launch ID (its first
// field), counting up, as a real export's IDs do. The page's rows must not
// hold line breaks inside quoted fields (true of ncu raw pages).
func RepeatRows(page []byte, size int64) (io.Reader, error) {
	if !bytes.HasSuffix(page, []byte("\n")) {
		page = append(page[:len(page):len(page)], '\n')
	}
	lines := bytes.SplitAfter(page, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty piece after the last newline
	if len(lines) < 3 {
		return nil, fmt.Errorf("synth: page needs a header, a units row and at least one launch row")
	}
	head := append(append([]byte{}, lines[0]...), lines[1]...)
	var rows [][]byte
	for _, l := range lines[2:] {
		// Keep what follows the first field: `"ID",rest`.
		i := bytes.Index(l, []byte(`",`))
		if !bytes.HasPrefix(l, []byte(`"`)) || i < 0 {
			return nil, fmt.Errorf("synth: row %q does not start with a quoted ID", l[:min(len(l), 40)])
		}
		rows = append(rows, l[i+1:])
	}
	return &repeater{buf: head, rows: rows, left: size - int64(len(head))}, nil
}

type repeater struct {
	buf  []byte // the row being read
	off  int    // how much of buf was read
	rows [][]byte
	next int   // the next row to make
	id   int64 // its launch ID
	left int64 // bytes still owed; a row is finished even past zero
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if r.off == len(r.buf) {
			if r.left <= 0 {
				break
			}
			r.buf = strconv.AppendInt(append(r.buf[:0], '"'), r.id, 10)
			r.buf = append(append(r.buf, '"'), r.rows[r.next]...)
			r.off = 0
			r.left -= int64(len(r.buf))
			r.id++
			r.next = (r.next + 1) % len(r.rows)
		}
		c := copy(p[n:], r.buf[r.off:])
		n += c
		r.off += c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
