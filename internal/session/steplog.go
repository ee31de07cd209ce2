package session

import (
	"fmt"
)

// The most of a step's console output kept for its log file: its first
// stepLogHead and last stepLogTail bytes. ncu's console output of a deep
// pass over thousands of launches is a few MB; a workload that prints
// without end (or a step run on the wrong input) is cut, not kept whole in
// memory.
const (
	stepLogHead = 8 << 20
	stepLogTail = 8 << 20
)

// stepLog keeps a step's console output: all of it up to head+tail bytes;
// past that its first head and its last tail bytes, and Bytes says how
// many were dropped between them. Memory stays under head+tail whatever
// the step prints.
type stepLog struct {
	head, tail int
	first      []byte // up to head bytes
	ring       []byte // the last bytes after first, circular once len == tail
	next       int    // where the ring's next byte goes once it is full
	dropped    int64
}

func newStepLog(head, tail int) *stepLog { return &stepLog{head: head, tail: tail} }

// Write keeps p as above; it never fails.
func (l *stepLog) Write(p []byte) (int, error) {
	n := len(p)
	if room := l.head - len(l.first); room > 0 {
		k := min(room, len(p))
		l.first = append(l.first, p[:k]...)
		p = p[k:]
	}
	if l.tail == 0 {
		l.dropped += int64(len(p))
		return n, nil
	}
	if len(p) > l.tail {
		// Only p's last tail bytes can stay: the ring is all of them.
		l.dropped += int64(len(l.ring)) + int64(len(p)-l.tail)
		l.ring = append(l.ring[:0], p[len(p)-l.tail:]...)
		l.next = 0
		return n, nil
	}
	if room := l.tail - len(l.ring); room > 0 {
		k := min(room, len(p))
		l.ring = append(l.ring, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // the ring is full: overwrite its oldest bytes
		k := copy(l.ring[l.next:], p)
		l.dropped += int64(k)
		l.next = (l.next + k) % l.tail
		p = p[k:]
	}
	return n, nil
}

// Bytes is what was kept: the whole output, or its head, a line saying how
// many bytes were dropped, and its tail.
func (l *stepLog) Bytes() []byte {
	out := append([]byte(nil), l.first...)
	if l.dropped > 0 {
		out = fmt.Appendf(out, "\n==> deepprof: %d bytes of this step's output dropped here (the log keeps its first %d and last %d bytes) <==\n",
			l.dropped, l.head, l.tail)
	}
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}
