// A CSV scanner for multi-gigabyte exports (see the package
// documentation, "CSV").

package input

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
)

// MaxRecord bounds one record's size, so that an unterminated quote in a huge
// file ends the read with an error instead of holding the file in memory.
const MaxRecord = 64 << 20

// The buffer starts small, so that short inputs cost little, and doubles on
// each read until reads are large (readAhead), then only as records need.
const (
	initialBuf = 64 << 10
	readAhead  = 1 << 20
)

// Error is a malformed record; Line is 1-based.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// span is one field, as offsets into the record.
type span struct {
	from, to int32 // records are at most MaxRecord bytes
	// quoted fields with escapes, lazy quotes or CR need unescaping.
	quoted, esc bool
}

// Scanner reads records from an io.Reader.
type Scanner struct {
	r     io.Reader
	buf   []byte
	start int // start of the unread data in buf
	end   int // end of the data in buf
	eof   bool
	ioErr error

	rec   []byte // the current record, without its line terminator
	spans []span
	// limit and expect: see SetFieldLimit. tail is the number of fields
	// past limit that were counted, not split.
	limit, expect, tail int
	hasCR               bool
	line                int // line number of the current record's first line
	nextLine            int // line number where the next record starts
	bomDone             bool

	scratch []byte
	err     error // sticky error that ends the scan
}

// New returns a Scanner reading from r.
func New(r io.Reader) *Scanner {
	return &Scanner{r: r, buf: make([]byte, initialBuf), nextLine: 1, spans: make([]span, 0, 64)}
}

// Line is the 1-based line on which the current record starts.
func (s *Scanner) Line() int { return s.line }

// NextLine is the line on which the next record would start.
func (s *Scanner) NextLine() int { return s.nextLine }

// Raw is the current record's bytes without its line terminator.
func (s *Scanner) Raw() []byte { return s.rec }

// NumFields is the number of fields of the current record.
func (s *Scanner) NumFields() int { return len(s.spans) + s.tail }

// SetFieldLimit makes Next split only the first limit fields of each record
// and count the rest: a reader that needs a few leading columns of very wide
// rows skips the work of splitting the others. When the rest of the record
// lies on one line, starts and ends with a quote, and holds exactly
// 2*(expect-limit) quotes and no "" other than empty cells, it is taken to be expect-limit quoted fields without escapes (the shape of every
// profiler row); otherwise its fields are split and counted exactly. The
// shortcut trusts the counted fields to hold no undoubled quotes: ncu writes
// those only in NVTX range names, which lie before any limit a reader sets.
// Field returns nil past limit. limit <= 0 turns this off.
func (s *Scanner) SetFieldLimit(limit, expect int) { s.limit, s.expect = limit, expect }

// Err is the error that ended the scan: an I/O error or an *Error for a
// record that cannot be delimited. It is nil at a clean end of input.
func (s *Scanner) Err() error { return s.err }

// fill reads more input, keeping buf[s.start:s.end]. It reports whether any
// byte was added.
func (s *Scanner) fill() bool {
	if s.eof {
		return false
	}
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if len(s.buf) < readAhead || len(s.buf)-s.end < len(s.buf)/4 {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	// Read until the buffer is full (or the input ends): a pipe returns
	// 64 KiB at a time, and a caller that rescans its record after each
	// fill would otherwise take quadratic time on a long one
	// (BenchmarkLongRecordPipe; docs/measurements.md). The buffer doubles,
	// so each byte is rescanned O(log n) times.
	got := false
	for tries := 0; tries < 100 && s.end < len(s.buf); {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		got = got || n > 0
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.ioErr = err
			}
			return got
		}
		if n == 0 {
			tries++
		}
	}
	if !got {
		s.eof = true
		s.ioErr = io.ErrNoProgress
	}
	return got
}

// skipBOM skips a byte-order mark at the very start of the input, whether
// the first call is Next or PeekLine.
func (s *Scanner) skipBOM() {
	if s.bomDone {
		return
	}
	for s.end-s.start < 3 && s.fill() {
	}
	if bytes.HasPrefix(s.buf[s.start:s.end], []byte("\xEF\xBB\xBF")) {
		s.start += 3
	}
	s.bomDone = true
}

// Next advances to the next record. Empty lines are skipped, as encoding/csv
// skips them. It returns false at the end of input or on an error (see Err).
func (s *Scanner) Next() bool {
	if s.err != nil {
		return false
	}
	s.skipBOM()
	for {
		data := s.buf[s.start:s.end]
		if len(data) == 0 || len(data) == 1 && data[0] == '\r' {
			if s.fill() {
				continue
			}
			if s.ioErr != nil {
				s.err = s.ioErr
			}
			return false // a lone CR at the end is dropped, as encoding/csv does
		}
		// Skip empty lines.
		if data[0] == '\n' {
			s.start++
			s.nextLine++
			continue
		}
		if data[0] == '\r' && data[1] == '\n' {
			s.start += 2
			s.nextLine++
			continue
		}
		recEnd, consumed, errMsg, more := s.walk(data, s.eof && s.ioErr == nil) // an input cut by an error ends no record
		if more {
			if len(data) > MaxRecord {
				s.err = &Error{Line: s.nextLine, Msg: fmt.Sprintf("record longer than %d MiB (an unterminated quoted field?)", MaxRecord>>20)}
				return false
			}
			if s.fill() {
				continue
			}
			if s.ioErr != nil {
				s.err = s.ioErr
				return false
			}
			recEnd, consumed, errMsg, _ = s.walk(s.buf[s.start:s.end], true)
			data = s.buf[s.start:s.end]
		}
		if errMsg != "" {
			s.err = &Error{Line: s.nextLine, Msg: errMsg}
			return false
		}
		s.rec = data[:recEnd]
		s.scratch = s.scratch[:0]
		s.hasCR = bytes.IndexByte(s.rec, '\r') >= 0
		s.line = s.nextLine
		s.nextLine += bytes.Count(data[:consumed], []byte{'\n'})
		if consumed == len(data) && (consumed == 0 || data[consumed-1] != '\n') {
			s.nextLine++ // the last line had no terminator
		}
		s.start += consumed
		return true
	}
}

// walk delimits the record at the start of data, filling s.spans. recEnd is
// where its content ends, consumed where the next record starts. more is true
// when data ends inside the record and eof is false.
func (s *Scanner) walk(data []byte, eof bool) (recEnd, consumed int, errMsg string, more bool) {
	s.spans = s.spans[:0]
	s.tail = 0
	if s.limit > 0 && s.expect > s.limit {
		if i, ok := s.quotedFields(data); ok {
			if end, cons, ok, more := s.countTail(data, i, eof); more {
				return 0, 0, "", true
			} else if ok {
				return end, cons, "", false
			}
		}
		s.spans = s.spans[:0]
		s.tail = 0
	}
	i := 0
	for {
		if s.limit > 0 && len(s.spans) == s.limit && s.expect > s.limit {
			if end, cons, ok, more := s.countTail(data, i, eof); more {
				return 0, 0, "", true
			} else if ok {
				return end, cons, "", false
			}
		}
		if i < len(data) && data[i] == '"' {
			// The common case first: "text", with no quote inside.
			if k := indexQuote(data[i+1:]); k >= 0 && i+2+k < len(data) && data[i+2+k] == ',' {
				s.spans = append(s.spans, span{int32(i + 1), int32(i + 1 + k), true, false})
				i += k + 3
				continue
			}
			j, esc := i+1, false
			for {
				k := indexQuote(data[j:])
				if k < 0 {
					if eof {
						return 0, 0, "quoted field not closed at the end of input (a cut file?)", false
					}
					return 0, 0, "", true
				}
				q := j + k
				if q+1 == len(data) {
					if !eof {
						return 0, 0, "", true
					}
					s.spans = append(s.spans, span{int32(i + 1), int32(q), true, esc})
					return q + 1, q + 1, "", false
				}
				switch c := data[q+1]; c {
				case '"':
					esc = true
					j = q + 2
					continue
				case ',':
					s.spans = append(s.spans, span{int32(i + 1), int32(q), true, esc})
					i = q + 2
				case '\n':
					s.spans = append(s.spans, span{int32(i + 1), int32(q), true, esc})
					return q + 1, q + 2, "", false
				case '\r':
					if q+2 == len(data) {
						if !eof {
							return 0, 0, "", true
						}
						s.spans = append(s.spans, span{int32(i + 1), int32(q), true, esc})
						return q + 1, q + 2, "", false
					}
					if data[q+2] == '\n' {
						s.spans = append(s.spans, span{int32(i + 1), int32(q), true, esc})
						return q + 1, q + 3, "", false
					}
					esc = true // a lazy quote
					j = q + 1
					continue
				default:
					esc = true // a lazy quote
					j = q + 1
					continue
				}
				break
			}
			continue
		}
		// An unquoted field runs to the next comma or line end.
		j := i
		for j < len(data) && data[j] != ',' && data[j] != '\n' {
			j++
		}
		if j == len(data) {
			if !eof {
				return 0, 0, "", true
			}
			end := j
			if end > i && data[end-1] == '\r' {
				end--
			}
			s.spans = append(s.spans, span{from: int32(i), to: int32(end)})
			return end, j, "", false
		}
		if data[j] == ',' {
			s.spans = append(s.spans, span{from: int32(i), to: int32(j)})
			i = j + 1
			continue
		}
		end := j
		if end > i && data[end-1] == '\r' {
			end--
		}
		s.spans = append(s.spans, span{from: int32(i), to: int32(end)})
		return end, j + 1, "", false
	}
}

// countTail tries SetFieldLimit's shortcut on the record's rest at data[i:].
func (s *Scanner) countTail(data []byte, i int, eof bool) (recEnd, consumed int, ok, more bool) {
	rest := data[i:]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 && !eof {
		return 0, 0, false, true
	}
	t, cons := rest, len(data)
	if nl >= 0 {
		t, cons = rest[:nl], i+nl+1
	}
	t = bytes.TrimSuffix(t, []byte{'\r'})
	if len(t) < 2 || t[0] != '"' || t[len(t)-1] != '"' {
		return 0, 0, false, false
	}
	// A "" that is not a whole empty cell is an escape (or a lazy quote):
	// then neither the count nor the line end can be trusted.
	if !quotePairsAreEmptyCells(t) {
		return 0, 0, false, false
	}
	q := bytes.Count(t, []byte{'"'})
	if q%2 != 0 || s.limit+q/2 != s.expect {
		return 0, 0, false, false
	}
	s.tail = q / 2
	return i + len(t), cons, true, false
}

// quotePairsAreEmptyCells reports whether every "" in t is a whole empty
// cell (a comma or t's edge on both sides). Profiler rows hold few of them,
// so the vectorized two-byte search stops only a few times a row.
func quotePairsAreEmptyCells(t []byte) bool {
	for off := 0; ; {
		k := bytes.Index(t[off:], []byte(`""`))
		if k < 0 {
			return true
		}
		k += off
		if (k > 0 && t[k-1] != ',') || (k+2 < len(t) && t[k+2] != ',') {
			return false
		}
		off = k + 2
	}
}

// quotedFields splits the first s.limit fields of the record at the start
// of data where each is a quoted field, each quote inside it doubled
// ("text",): the shape of a profiler export's cells. It finds the quotes eight bytes at a
// time (quoteBits), every quote of a word at once, where walk searches for
// each one. It returns where field s.limit starts; ok is false, with
// s.spans unspecified, where a field has another shape or data ends
// within a word of the fields: walk then splits the record itself.
func (s *Scanner) quotedFields(data []byte) (next int, ok bool) {
	base, bits64 := 0, uint64(0) // the quotes of data[base:base+8] not yet used
	quote := func() int {
		for bits64 == 0 {
			if base += 8; base+8 > len(data) {
				return -1
			}
			bits64 = quoteBits(binary.LittleEndian.Uint64(data[base:]))
		}
		q := base + bits.TrailingZeros64(bits64)>>3
		bits64 &= bits64 - 1
		return q
	}
	if len(data) < 8 {
		return 0, false
	}
	bits64 = quoteBits(binary.LittleEndian.Uint64(data))
	for range s.limit {
		open := quote()
		if open != next {
			return 0, false
		}
		end, esc := quote(), false
		for end >= 0 && end+1 < len(data) && data[end+1] == '"' { // "" inside: an escaped quote
			if quote() != end+1 {
				return 0, false
			}
			end, esc = quote(), true
		}
		if end < 0 || end+1 >= len(data) || data[end+1] != ',' {
			return 0, false
		}
		s.spans = append(s.spans, span{int32(open + 1), int32(end), true, esc})
		next = end + 2
	}
	return next, true
}

// quoteBits has the high bit set of each byte of w that is '"', exactly
// (the sum cannot carry from one byte into the next).
func quoteBits(w uint64) uint64 {
	const low7, quotes = 0x7f7f7f7f7f7f7f7f, 0x2222222222222222
	x := w ^ quotes
	return ^((x&low7 + low7) | x | low7)
}

// indexQuote is bytes.IndexByte(b, '"'), faster on the short fields that
// make up most of a profiler export: it tests eight bytes at a time with a
// word-sized zero-byte test before paying for the vectorized search's setup.
func indexQuote(b []byte) int {
	const ones, highs, quotes = 0x0101010101010101, 0x8080808080808080, 0x2222222222222222
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) ^ quotes
		// The lowest set bit of t marks the first zero byte of x exactly;
		// bits above it may be false positives, which are never used.
		if t := (x - ones) &^ x & highs; t != 0 {
			return i + bits.TrailingZeros64(t)>>3
		}
		if i >= 24 {
			if k := bytes.IndexByte(b[i+8:], '"'); k >= 0 {
				return i + 8 + k
			}
			return -1
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' {
			return i
		}
	}
	return -1
}

// Field returns field i of the current record, unquoted (nil when the record
// has fewer fields). A field that needs unescaping is copied into scratch
// space that lives until the next call to Next.
func (s *Scanner) Field(i int) []byte {
	if i < 0 || i >= len(s.spans) {
		return nil
	}
	sp := s.spans[i]
	f := s.rec[sp.from:sp.to]
	if sp.esc || sp.quoted && s.hasCR {
		from := len(s.scratch)
		s.scratch = unescape(s.scratch, f)
		return s.scratch[from:len(s.scratch):len(s.scratch)]
	}
	return f
}

// RawField returns field i as written between its quotes, escapes and all,
// and whether it needs unescaping (see Field). Callers use it as a cheap
// cache key.
func (s *Scanner) RawField(i int) (raw []byte, escaped bool) {
	if i < 0 || i >= len(s.spans) {
		return nil, false
	}
	sp := s.spans[i]
	return s.rec[sp.from:sp.to], sp.esc || sp.quoted && s.hasCR
}

// Fields appends to dst the first max fields of the current record (all of
// them when max < 0) and returns the slice, as Field returns them.
func (s *Scanner) Fields(dst [][]byte, max int) [][]byte {
	n := s.NumFields()
	if max >= 0 && max < n {
		n = max
	}
	for i := 0; i < n; i++ {
		dst = append(dst, s.Field(i))
	}
	return dst
}

// unescape appends field with "" turned into " and CRLF into LF, as
// encoding/csv does.
func unescape(dst, field []byte) []byte {
	for len(field) > 0 {
		switch {
		case len(field) >= 2 && field[0] == '"' && field[1] == '"':
			dst = append(dst, '"')
			field = field[2:]
		case len(field) >= 2 && field[0] == '\r' && field[1] == '\n':
			dst = append(dst, '\n')
			field = field[2:]
		default:
			dst = append(dst, field[0])
			field = field[1:]
		}
	}
	return dst
}

// PeekLine returns the next physical line (without its terminator), quotes
// ignored, without consuming it; ok is false at the end of input. Readers use
// it to pass over tool and program output that precedes a CSV header.
func (s *Scanner) PeekLine() (line []byte, ok bool) { return s.PeekLineLimit(MaxRecord) }

// PeekLineLimit is PeekLine that stops looking for the line's end after
// limit bytes: a longer line comes back cut, longer than limit.
func (s *Scanner) PeekLineLimit(limit int) (line []byte, ok bool) {
	s.skipBOM()
	scanned := 0 // bytes of the line already searched for '\n'
	for {
		data := s.buf[s.start:s.end]
		if nl := bytes.IndexByte(data[scanned:], '\n'); nl >= 0 {
			return bytes.TrimSuffix(data[:scanned+nl], []byte{'\r'}), true
		}
		scanned = len(data)
		if len(data) > limit {
			return data, true
		}
		if !s.fill() {
			if s.ioErr != nil && s.err == nil {
				s.err = s.ioErr
			}
			data = s.buf[s.start:s.end]
			return bytes.TrimSuffix(data, []byte{'\r'}), len(data) > 0
		}
	}
}

// SkipLine consumes the line PeekLine returned.
func (s *Scanner) SkipLine() {
	data := s.buf[s.start:s.end]
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		s.start += nl + 1
	} else {
		s.start = s.end
	}
	s.nextLine++
}
