package cupti

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llm-perf-opt/deepprof/internal/input"
)

// MaxLine is the longest line read, in bytes; a longer line is a positioned
// error and is skipped. Demangled template names run to tens of KB.
const MaxLine = 4 << 20

// MaxRun is how far a line with no end is followed: past it the read
// stops, keeping what came before (a file with a hole of zeros, or not a
// record file, is not read to its end).
const MaxRun = 64 << 20

// maxIntern bounds the interned strings, so that memory stays bounded on
// inputs with ever-new names.
const maxIntern = 1 << 16

// Field counts, the record's type letter included.
const (
	nKernel = 14
	nMemcpy = 9
	nMemset = 8
	nAPI    = 8
	nNVTX   = 7
	nNote   = 3
	nMetric = 4
	nWindow = 4
	nEnd    = 3
)

// Reader reads the records of one file.
type Reader struct {
	name string
	in   io.Reader
	br   *bufio.Reader

	started bool
	line    int
	long    []byte     // a line longer than the bufio buffer, assembled
	lp      lineParser // the header's and, read in sequence, the records'

	hdr     *Header
	end     *End
	rec     Record
	err     error
	eof     bool
	partial int // bytes of an unfinished last line
	stopped int // the line where a run with no line end passed MaxRun; 0: none
	records int64

	par *parallel // records parsed by workers (NewParallelReader); nil: in sequence
}

// NewReader returns a Reader of r, the records as text (OpenRecords, in
// package timeline, takes a gzipped file apart first); name is used in
// error messages.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, in: r, lp: newLineParser(name)}
}

// Record is the current record. Each call to Scan returns a new one, except
// that a read with ReuseRecords makes its kernel, API and NVTX records in
// the memory of those it returned before.
func (r *Reader) Record() Record { return r.rec }

// Err is the error that ended the read: an I/O error, or a *SyntaxError for a
// file that is not a deepprof-cupti/1 file. It is nil at the end of input,
// cut short or not.
func (r *Reader) Err() error { return r.err }

// Header is the file's header; nil before the first Scan and for an empty file.
func (r *Reader) Header() *Header { return r.hdr }

// End is the file's E record; nil until it is read, and for a file cut short.
func (r *Reader) End() *End { return r.end }

// Records is the number of records returned so far, the header and
// SyntaxErrors not counted.
func (r *Reader) Records() int64 { return r.records }

// Truncation says, once Scan has returned false with a nil Err, whether and
// how the file was cut short: "" for a complete file (one ending in its E
// line), else what is missing.
func (r *Reader) Truncation() string {
	if r.end != nil {
		return ""
	}
	msg := "no E line: the process did not exit normally (crash, kill, _exit in a forked child, or still running); what was flushed is kept"
	if r.hdr == nil {
		msg = "empty: the process wrote no complete line"
	}
	if r.partial > 0 {
		msg += fmt.Sprintf("; an unfinished last line of %d bytes was dropped", r.partial)
	}
	if r.stopped > 0 {
		msg = fmt.Sprintf("line %d runs past %d MiB with no line end (a hole of zeros, or not a record file): reading stopped there, what came before is kept", r.stopped, MaxRun>>20)
	}
	return msg
}

func (r *Reader) syntax(format string, args ...any) *SyntaxError {
	return &SyntaxError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// lineParser parses record lines: a Reader's own, or one of a parallel
// read's workers (each its own fields and interned strings).
type lineParser struct {
	name   string
	line   int // the number of the line being parsed
	fields [][]byte
	intern map[string]string
	// slab, when not nil, is where kernel, API and NVTX records are made
	// (ReuseRecords).
	slab *slab
}

func newLineParser(name string) lineParser {
	return lineParser{name: name, intern: map[string]string{}}
}

func (r *lineParser) syntax(format string, args ...any) *SyntaxError {
	return &SyntaxError{File: r.name, Line: r.line, Msg: fmt.Sprintf(format, args...)}
}

// Scan advances to the next record. It returns false at the end of input or
// when the read cannot go on (see Err).
func (r *Reader) Scan() bool {
	if r.par != nil && r.par.begun {
		return r.scanParallel()
	}
	if r.err != nil || r.eof {
		return false
	}
	if !r.started {
		r.started = true
		r.br = bufio.NewReaderSize(r.in, 64<<10)
	}
	line, st := r.next()
	switch st {
	case lineEnd:
		return false
	case lineTooLong:
		se := r.syntax("line longer than %d bytes", MaxLine)
		if r.hdr == nil {
			r.err = se
			return false
		}
		r.rec = se
		return true
	}
	if r.hdr == nil {
		r.lp.line = r.line
		h, err := r.lp.parseHeader(line)
		if err != nil {
			r.err = err
			return false
		}
		r.hdr = h
		r.rec = h
		if r.par != nil {
			r.par.begin(r)
		}
		return true
	}
	r.lp.line = r.line
	rec, kind := r.lp.parse(line)
	r.deliver(rec, kind, r.line)
	return true
}

// deliver makes rec, parsed of line (kind: its record type, 0 for a line
// refused before its type was read), the current record, in the file's
// order: any record after the E line is an error.
func (r *Reader) deliver(rec Record, kind byte, line int) {
	if r.end != nil && kind != 0 {
		rec = &SyntaxError{File: r.name, Line: line, Msg: fmt.Sprintf("%c record after the E line, which ends the file", kind)}
	} else if e, ok := rec.(*End); ok {
		r.end = e
	}
	if _, bad := rec.(*SyntaxError); !bad {
		r.records++
	}
	r.rec = rec
}

type lineStatus int

const (
	lineOK lineStatus = iota
	lineEnd
	lineTooLong
)

// next returns the next complete line without its '\n'. At the end of input
// it keeps the length of an unfinished last line (dropped: the writer was
// cut off in the middle of it). A line over MaxLine is read to its end and
// reported, not returned; one with no end within MaxRun ends the read.
func (r *Reader) next() ([]byte, lineStatus) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], b...)
		n := len(b)
		for err == bufio.ErrBufferFull {
			b, err = r.br.ReadSlice('\n')
			n += len(b)
			if n <= MaxLine+1 {
				r.long = append(r.long, b...)
			}
			if n > MaxRun {
				r.stopped, r.eof, r.end = r.line+1, true, nil
				return nil, lineEnd
			}
		}
		if n > MaxLine+1 && err == nil {
			r.line++
			return nil, lineTooLong
		}
		b = r.long
		if n > MaxLine+1 {
			b = b[:0] // an over-long unfinished last line
			r.partial = n
		}
	}
	if err == io.EOF {
		r.eof = true
		if r.partial == 0 {
			r.partial = len(b)
		}
		return nil, lineEnd
	}
	if err != nil {
		r.err = fmt.Errorf("%s: %w", r.name, err)
		return nil, lineEnd
	}
	r.line++
	return b[:len(b)-1], lineOK
}

// split cuts a line at its TABs into r.fields.
func (r *lineParser) split(line []byte) [][]byte {
	f := r.fields[:0]
	for {
		i := bytes.IndexByte(line, '\t')
		if i < 0 {
			f = append(f, line)
			break
		}
		f = append(f, line[:i])
		line = line[i+1:]
	}
	r.fields = f
	return f
}

func (r *lineParser) parseHeader(line []byte) (*Header, error) {
	f := r.split(line)
	if !bytes.HasPrefix(f[0], []byte(magicPrefix)) {
		if len(line) == 0 {
			return nil, r.syntax("first line is empty: not a deepprof-cupti record file (it starts with a %s header)", Magic)
		}
		return nil, r.syntax("first line is not a %s header: not a deepprof-cupti record file", Magic)
	}
	if string(f[0]) != Magic {
		return nil, r.syntax("format %q is not one this reader knows (%s)", f[0], Magic)
	}
	h := &Header{Line: r.line}
	seen := map[string]bool{}
	for _, fb := range f[1:] {
		s, err := unescape(fb)
		if err != nil {
			return nil, r.syntax("header: %v", err)
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, r.syntax("header field %q is not key=value", s)
		}
		if seen[k] {
			return nil, r.syntax("header key %q appears twice", k)
		}
		seen[k] = true
		var perr error
		switch k {
		case keyPID:
			h.PID, perr = parseInt(v)
		case keyPPID:
			h.PPID, perr = parseInt(v)
		case keyCUPTIAPI:
			h.CUPTIAPI, perr = parseInt(v)
		case keyCUDADriver:
			h.CUDADriver, perr = parseInt(v)
		case keyStartNS:
			h.StartNS, perr = parseInt(v)
		case keyExe:
			h.Exe = v
		default:
			h.Extra = append(h.Extra, KeyValue{k, v})
		}
		if perr != nil {
			return nil, r.syntax("header %s=%q: %v", k, v, perr)
		}
	}
	for _, k := range []string{keyPID, keyPPID, keyCUPTIAPI, keyCUDADriver, keyStartNS, keyExe} {
		if !seen[k] {
			return nil, r.syntax("header has no %s= field", k)
		}
	}
	return h, nil
}

// parse reads one record line (after the header), and gives its record
// type where the line has one (0: refused before its type was read;
// Reader.deliver refuses the others after the E line).
func (r *lineParser) parse(line []byte) (Record, byte) {
	if len(line) == 0 {
		return r.syntax("empty line"), 0
	}
	f := r.split(line)
	if len(f[0]) != 1 {
		if bytes.HasPrefix(f[0], []byte(magicPrefix)) {
			return r.syntax("a second header line"), 0
		}
		return r.syntax("record type %q is not one of K C S A N M W X E", clip(f[0])), 0
	}
	return r.record(f), f[0][0]
}

// newKernel, newAPI and newNVTX are a new record of the line being
// parsed: the next of the slab's, where there is one.
func (r *lineParser) newKernel() *KernelRecord {
	if r.slab == nil {
		return &KernelRecord{Line: r.line}
	}
	r.slab.kernels = append(r.slab.kernels, KernelRecord{Line: r.line})
	return &r.slab.kernels[len(r.slab.kernels)-1]
}

func (r *lineParser) newAPI() *API {
	if r.slab == nil {
		return &API{Line: r.line}
	}
	r.slab.apis = append(r.slab.apis, API{Line: r.line})
	return &r.slab.apis[len(r.slab.apis)-1]
}

func (r *lineParser) newNVTX() *NVTX {
	if r.slab == nil {
		return &NVTX{Line: r.line}
	}
	r.slab.nvtx = append(r.slab.nvtx, NVTX{Line: r.line})
	return &r.slab.nvtx[len(r.slab.nvtx)-1]
}

// record reads the fields f of a record line whose type is f[0].
func (r *lineParser) record(f [][]byte) Record {
	p := fieldParser{r: r, f: f}
	var rec Record
	switch f[0][0] {
	case 'K':
		if !p.count(nKernel, "K (kernel)") {
			break
		}
		k := r.newKernel()
		k.Start, k.End = p.span(1, 2)
		k.Device = p.u32(3, "device")
		k.Context = p.u32(4, "context")
		k.Stream = p.u32(5, "stream")
		k.Correlation = p.u32(6, "correlation")
		k.Grid = p.dim3(7, "grid")
		k.Block = p.dim3(8, "block")
		k.Registers = p.u32(9, "registers_per_thread")
		k.StaticShared = p.u32(10, "static_shared_bytes")
		k.DynamicShared = p.u32(11, "dynamic_shared_bytes")
		k.Mangled = p.str(12, "mangled_name")
		k.Demangled = p.str(13, "demangled_name")
		if p.err == nil && k.Mangled == "" && k.Demangled == "" {
			p.fail("kernel has neither a mangled nor a demangled name")
		}
		rec = k
	case 'C':
		if !p.count(nMemcpy, "C (memcpy)") {
			break
		}
		c := &Memcpy{Line: r.line}
		c.Start, c.End = p.span(1, 2)
		c.Device = p.u32(3, "device")
		c.Context = p.u32(4, "context")
		c.Stream = p.u32(5, "stream")
		c.Correlation = p.u32(6, "correlation")
		kind := p.str(7, "copy_kind")
		if p.err == nil && !validCopyKind(kind) {
			p.fail(fmt.Sprintf("copy_kind %q is not one of HtoD DtoH DtoD HtoH PtoP other", kind))
		}
		c.Kind = CopyKind(kind)
		c.Bytes = p.u64(8, "bytes")
		rec = c
	case 'S':
		if !p.count(nMemset, "S (memset)") {
			break
		}
		s := &Memset{Line: r.line}
		s.Start, s.End = p.span(1, 2)
		s.Device = p.u32(3, "device")
		s.Context = p.u32(4, "context")
		s.Stream = p.u32(5, "stream")
		s.Correlation = p.u32(6, "correlation")
		s.Bytes = p.u64(7, "bytes")
		rec = s
	case 'A':
		if !p.count(nAPI, "A (API call)") {
			break
		}
		a := r.newAPI()
		a.Start, a.End = p.span(1, 2)
		a.Thread = p.i64(3, "thread_id")
		a.Correlation = p.u32(4, "correlation")
		kind := p.str(5, "api")
		if p.err == nil && kind != string(APIRuntime) && kind != string(APIDriver) {
			p.fail(fmt.Sprintf("api %q is not runtime or driver", kind))
		}
		a.Kind = APIKind(kind)
		a.CBID = p.u32(6, "cbid")
		a.Function = p.str(7, "function_name")
		rec = a
	case 'N':
		if !p.count(nNVTX, "N (NVTX)") {
			break
		}
		n := r.newNVTX()
		kind := p.str(1, "kind")
		if p.err == nil && !validNVTXKind(kind) {
			p.fail(fmt.Sprintf("NVTX kind %q is not one of push pop start end mark", kind))
		}
		n.Kind = NVTXKind(kind)
		n.TS = p.i64(2, "ts")
		n.Thread = p.i64(3, "thread_id")
		n.ID = p.u64(4, "id")
		n.Domain = p.str(5, "domain")
		n.Name = p.str(6, "name")
		rec = n
	case 'M':
		if !p.count(nMetric, "M (metric)") {
			break
		}
		m := &Metric{Line: r.line}
		m.Correlation = p.u32(1, "correlation")
		m.Name = p.str(2, "metric")
		m.Value = p.f64(3, "value")
		if p.err == nil && m.Name == "" {
			p.fail("metric has an empty name")
		}
		rec = m
	case 'W':
		if !p.count(nWindow, "W (window)") {
			break
		}
		w := &Window{Line: r.line}
		w.Correlation = p.u32(1, "correlation")
		w.Start, w.End = p.span(2, 3)
		rec = w
	case 'X':
		if !p.count(nNote, "X (note)") {
			break
		}
		x := &Note{Line: r.line}
		x.Key = p.str(1, "key")
		x.Value = p.str(2, "value")
		if p.err == nil && x.Key == "" {
			p.fail("note has an empty key")
		}
		rec = x
	case 'E':
		if !p.count(nEnd, "E (end)") {
			break
		}
		e := &End{Line: r.line}
		e.Records = p.u64(1, "records")
		e.Dropped = p.u64(2, "dropped")
		rec = e
	default:
		return r.syntax("record type %q is not one of K C S A N M W X E", clip(f[0]))
	}
	if p.err != nil {
		return p.err
	}
	return rec
}

// fieldParser reads the fields of one record, keeping the first problem.
type fieldParser struct {
	r   *lineParser
	f   [][]byte
	err *SyntaxError
}

func (p *fieldParser) fail(msg string) {
	if p.err == nil {
		p.err = p.r.syntax("%c record: %s", p.f[0][0], msg)
	}
}

func (p *fieldParser) count(want int, what string) bool {
	if len(p.f) != want {
		p.err = p.r.syntax("%s record has %d fields, want %d", what, len(p.f), want)
		return false
	}
	return true
}

func (p *fieldParser) bad(name string, text []byte, err error) {
	p.fail(fmt.Sprintf("%s %q: %v", name, clip(text), err))
}

func (p *fieldParser) u64(i int, name string) uint64 {
	v, err := parseUint(p.f[i], math.MaxUint64)
	if err != nil {
		p.bad(name, p.f[i], err)
	}
	return v
}

func (p *fieldParser) u32(i int, name string) uint32 {
	v, err := parseUint(p.f[i], math.MaxUint32)
	if err != nil {
		p.bad(name, p.f[i], err)
	}
	return uint32(v)
}

func (p *fieldParser) i64(i int, name string) int64 {
	v, err := parseUint(p.f[i], math.MaxInt64)
	if err != nil {
		p.bad(name, p.f[i], err)
	}
	return int64(v)
}

// f64 reads a finite number, as C's %.17g writes it.
func (p *fieldParser) f64(i int, name string) float64 {
	v, err := strconv.ParseFloat(string(p.f[i]), 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
		err = errors.New("not a finite number")
	}
	if err != nil {
		p.bad(name, p.f[i], err)
	}
	return v
}

// span reads a start and an end; an end before its start is an error.
func (p *fieldParser) span(i, j int) (int64, int64) {
	s, e := p.i64(i, "start"), p.i64(j, "end")
	if p.err == nil && e < s {
		p.fail(fmt.Sprintf("end %d is before start %d (a negative duration)", e, s))
	}
	return s, e
}

func (p *fieldParser) dim3(i int, name string) Dim3 {
	b := p.f[i]
	var v [3]uint32
	for k := range 3 {
		var part []byte
		if k < 2 {
			j := bytes.IndexByte(b, ',')
			if j < 0 {
				p.bad(name, p.f[i], errors.New("not x,y,z"))
				return Dim3{}
			}
			part, b = b[:j], b[j+1:]
		} else {
			part = b
		}
		n, err := parseUint(part, math.MaxUint32)
		if err != nil {
			p.bad(name, p.f[i], fmt.Errorf("not x,y,z: %v", err))
			return Dim3{}
		}
		v[k] = uint32(n)
	}
	return Dim3{v[0], v[1], v[2]}
}

func (p *fieldParser) str(i int, name string) string {
	b := p.f[i]
	if indexEscape(b) < 0 && utf8.Valid(b) {
		return p.r.internBytes(b)
	}
	s, err := unescape(b)
	if err != nil {
		p.fail(fmt.Sprintf("%s: %v", name, err))
		return ""
	}
	// A name is data: bytes that are not UTF-8 are kept apart as text.
	return p.r.internString(input.ValidName(s))
}

func (r *lineParser) internBytes(b []byte) string {
	if s, ok := r.intern[string(b)]; ok {
		return s
	}
	return r.internString(string(b))
}

func (r *lineParser) internString(s string) string {
	if t, ok := r.intern[s]; ok {
		return t
	}
	if len(r.intern) < maxIntern {
		r.intern[s] = s
	}
	return s
}

var (
	errNotInt   = errors.New("not a decimal integer")
	errTooLarge = errors.New("out of range")
)

// parseUint reads a decimal integer of at most max: digits only (no sign,
// no spaces, no "NaN").
func parseUint(b []byte, max uint64) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty")
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errNotInt
		}
		d := uint64(c - '0')
		if n > (max-d)/10 {
			// Keep checking the rest is digits, so "99...9x" reads as not a number.
			for _, c := range b {
				if c < '0' || c > '9' {
					return 0, errNotInt
				}
			}
			return 0, fmt.Errorf("%w (largest %d)", errTooLarge, max)
		}
		n = n*10 + d
	}
	return n, nil
}

func parseInt(s string) (int64, error) {
	v, err := parseUint([]byte(s), math.MaxInt64)
	return int64(v), err
}

// clip shortens text quoted in an error message.
func clip(b []byte) string {
	const n = 60
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
