// Package synth makes SYNTHETIC profiler exports from real recordings, for
// benchmarks: a real raw page's header and units rows, then its launch rows
// repeated to any size. Nothing it makes is a fixture; its output is never
// committed.
package synth

import (
	"bytes"
	"fmt"
	"io"
)

// RepeatRows returns a reader of the raw page's first two lines (header and
// units) followed by its remaining lines repeated, whole, until at least size
// bytes have been produced. The page's rows must not hold line breaks inside
// quoted fields (true of ncu raw pages, whose cells are single-line).
func RepeatRows(page []byte, size int64) (io.Reader, error) {
	if !bytes.HasSuffix(page, []byte("\n")) {
		page = append(page[:len(page):len(page)], '\n')
	}
	first := bytes.IndexByte(page, '\n')
	if first < 0 {
		return nil, fmt.Errorf("synth: page has no header line")
	}
	second := bytes.IndexByte(page[first+1:], '\n')
	if second < 0 {
		return nil, fmt.Errorf("synth: page has no units line")
	}
	head := page[:first+1+second+1]
	body := page[len(head):]
	if len(body) == 0 {
		return nil, fmt.Errorf("synth: page has no launch rows to repeat")
	}
	return &repeater{head: head, body: body, left: size - int64(len(head))}, nil
}

type repeater struct {
	head, body []byte
	off        int // offset into head, then into body
	inBody     bool
	left       int64 // bytes still owed; rows are finished even past zero
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if !r.inBody {
			c := copy(p[n:], r.head[r.off:])
			n += c
			r.off += c
			if r.off == len(r.head) {
				r.inBody, r.off = true, 0
			}
			continue
		}
		if r.off == 0 && r.left <= 0 {
			break
		}
		c := copy(p[n:], r.body[r.off:])
		n += c
		r.off += c
		r.left -= int64(c)
		if r.off == len(r.body) {
			r.off = 0
		}
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
