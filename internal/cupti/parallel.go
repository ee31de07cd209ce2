package cupti

import (
	"io"
	"slices"
	"sync"
)

// NewParallelReader is NewReader whose record lines, after the header, are
// parsed by workers goroutines (at least 2; fewer: NewReader's) while Scan
// returns them in the file's order, the records, errors and line numbers
// those of NewReader. One reading goroutine cuts the lines: a file of
// hundreds of MB parses on several cores. Close ends the goroutines of a
// read stopped before its end.
func NewParallelReader(r io.Reader, name string, workers int) *Reader {
	rd := NewReader(r, name)
	if workers >= 2 {
		rd.par = &parallel{workers: workers, batchBytes: batchBytes, quit: make(chan struct{})}
	}
	return rd
}

// Close ends a parallel read's goroutines; Scan then returns false. It
// does nothing to a Reader from NewReader, or to one read to its end.
func (r *Reader) Close() {
	if r.par != nil {
		r.par.close()
	}
}

// batchBytes is about how many bytes of lines one batch holds.
const batchBytes = 256 << 10

// parallel is a parallel read's pipeline: the reading goroutine sends each
// batch of lines to order (the batches in the file's order) and to work
// (the workers); Scan takes them from order as each is parsed.
type parallel struct {
	workers    int
	batchBytes int
	begun      bool // the header was read: Scan takes the records from order
	ended      bool // order is drained, or Close was called
	work       chan *batch
	order      chan *batch
	free       chan *batch // batches Scan is done with, for the cutting to fill again
	quit       chan struct{}
	quitOnce   sync.Once
	cur        *batch
	i          int
	// reuse: the batches' kernel, API and NVTX records are made in their
	// slabs, written over when a batch is filled again (ReuseRecords).
	reuse bool
}

// batch is consecutive lines of the file and, once done is closed, their
// records.
type batch struct {
	data  []byte
	lines []rawLine
	recs  []Record
	kinds []byte // each record's type (lineParser.parse)
	slab  slab   // its records, where the read reuses them
	done  chan struct{}
}

// slab holds the records of a batch of the kinds a long record file is
// made of, for a read that reuses them (ReuseRecords).
type slab struct {
	kernels []KernelRecord
	apis    []API
	nvtx    []NVTX
}

func (s *slab) reset() {
	clear(s.kernels)
	clear(s.apis)
	clear(s.nvtx)
	s.kernels, s.apis, s.nvtx = s.kernels[:0], s.apis[:0], s.nvtx[:0]
}

// ReuseRecords makes a parallel read (NewParallelReader, 2 workers or more)
// write its kernel, API and NVTX records over those of lines it has
// returned: such a record is valid until the next Scan, and a caller that
// keeps one keeps a copy. Reading a long file then allocates no memory a
// record. It is called before the first Scan; on a read in sequence it
// does nothing.
func (r *Reader) ReuseRecords() {
	if r.par != nil && !r.par.begun {
		r.par.reuse = true
	}
}

// rawLine is one line of a batch: data[start:end], line number no; a line
// over MaxLine is tooLong, its bytes not kept.
type rawLine struct {
	start, end, no int
	tooLong        bool
}

// begin starts the pipeline once the header has been read.
func (p *parallel) begin(r *Reader) {
	p.begun = true
	p.work = make(chan *batch)
	p.order = make(chan *batch, 2*p.workers)
	p.free = make(chan *batch, 4*p.workers)
	go r.cut(p)
	for range p.workers {
		go p.parse(r.name)
	}
}

// cut reads the lines after the header into batches, as Scan would one at
// a time (r.next: the line numbers, an over-long line, an unfinished last
// line, a read error); it alone touches the Reader's input and its end
// state until it closes order.
func (r *Reader) cut(p *parallel) {
	defer close(p.order)
	defer close(p.work)
	b := p.empty()
	for {
		line, st := r.next()
		if st == lineEnd {
			break
		}
		if st == lineTooLong {
			b.lines = append(b.lines, rawLine{no: r.line, tooLong: true})
		} else {
			start := len(b.data)
			b.data = append(b.data, line...)
			b.lines = append(b.lines, rawLine{start: start, end: len(b.data), no: r.line})
		}
		if len(b.data) >= p.batchBytes || len(b.lines) >= p.batchBytes/16 {
			if !p.send(b) {
				return
			}
			b = p.empty()
		}
	}
	if len(b.lines) > 0 {
		p.send(b)
	}
}

// empty is a batch to fill: one Scan is done with, else a new one.
func (p *parallel) empty() *batch {
	select {
	case b := <-p.free:
		b.data, b.lines, b.done = b.data[:0], b.lines[:0], make(chan struct{})
		return b
	default:
		return &batch{data: make([]byte, 0, p.batchBytes+p.batchBytes/4), done: make(chan struct{})}
	}
}

// send hands b to Scan's queue, then to a worker; false once Close was
// called.
func (p *parallel) send(b *batch) bool {
	select {
	case p.order <- b:
	case <-p.quit:
		return false
	}
	select {
	case p.work <- b:
		return true
	case <-p.quit:
		return false
	}
}

// parse is one worker: it parses the batches it is given, each with its
// own lineParser.
func (p *parallel) parse(name string) {
	lp := newLineParser(name)
	for b := range p.work {
		lp.slab = nil
		if p.reuse {
			b.slab.reset()
			lp.slab = &b.slab
		}
		b.recs = slices.Grow(b.recs[:0], len(b.lines))[:len(b.lines)]
		b.kinds = slices.Grow(b.kinds[:0], len(b.lines))[:len(b.lines)]
		for i, l := range b.lines {
			lp.line = l.no
			if l.tooLong {
				b.recs[i] = lp.syntax("line longer than %d bytes", MaxLine)
				continue
			}
			b.recs[i], b.kinds[i] = lp.parse(b.data[l.start:l.end])
		}
		close(b.done)
	}
}

// scanParallel is Scan of a parallel read once its header was read.
func (r *Reader) scanParallel() bool {
	p := r.par
	if p.ended {
		return false
	}
	for p.cur == nil || p.i == len(p.cur.recs) {
		if p.cur != nil {
			// Its records hold no bytes of its lines (their strings are
			// copies): it can be filled again.
			clear(p.cur.recs)
			select {
			case p.free <- p.cur:
			default:
			}
			p.cur = nil
		}
		b, ok := <-p.order
		if !ok {
			// The cutting ended (its state, r.err and r.partial among it,
			// is final now), and every batch was taken.
			p.ended = true
			return false
		}
		select {
		case <-b.done:
		case <-p.quit:
			p.ended = true
			return false
		}
		p.cur, p.i = b, 0
	}
	i := p.i
	p.i++
	r.deliver(p.cur.recs[i], p.cur.kinds[i], p.cur.lines[i].no)
	return true
}

func (p *parallel) close() {
	p.quitOnce.Do(func() { close(p.quit) })
	p.ended = true
}
