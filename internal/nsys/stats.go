package nsys

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// SyntaxError is a positioned problem with the input; Line is 1-based. It
// prints as "file:line: msg".
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Record is what a reader's Record returns: a *KernelSum, a *RangeSum or a
// *SyntaxError.
type Record interface{ isRecord() }

func (*KernelSum) isRecord()   {}
func (*RangeSum) isRecord()    {}
func (*SyntaxError) isRecord() {}

// KernelSum is one row of cuda_gpu_kern_sum: one kernel name's launches in
// the captured range. Times are in nanoseconds, whatever unit the header
// named; columns the export lacks are zero.
type KernelSum struct {
	Name      string
	TotalNS   float64
	AvgNS     float64
	MedNS     float64
	MinNS     float64
	MaxNS     float64
	StdDevNS  float64
	Instances int64
	TimePct   float64 // Time (%): share of the summed kernel time
	Line      int     // line of the row in the export
}

// RangeSum is one row of nvtx_sum: one NVTX range name's instances.
type RangeSum struct {
	Range     string // as nsys writes it: "Domain:name", ":name" in the default domain
	NVTX      model.Range
	Style     string // PushPop or StartEnd; "" when the export has no Style column
	TotalNS   float64
	AvgNS     float64
	MedNS     float64
	MinNS     float64
	MaxNS     float64
	StdDevNS  float64
	Instances int64
	TimePct   float64
	Line      int
}

// Column base names (the header text before " (unit)"), with the older
// spellings nsys used for the same statistics.
var statCols = map[string]int{
	"Time": colPct, "Total Time": colTotal, "Instances": colInst,
	"Avg": colAvg, "Average": colAvg, "Med": colMed, "Median": colMed,
	"Min": colMin, "Minimum": colMin, "Max": colMax, "Maximum": colMax,
	"StdDev": colStd,
}

const (
	colPct = iota
	colTotal
	colInst
	colAvg
	colMed
	colMin
	colMax
	colStd
	colName
	colStyle
	numCols
)

// preamble are the starts of lines nsys prints before a report's CSV when
// it writes to stdout.
var preamble = []string{"Generating SQLite file", "Processing [", "Exporting ", "NOTICE:", "WARNING:"}

// table is what the two readers share: the header, its units, the rows.
type table struct {
	name    string // input name, for errors
	report  string // report name, for errors
	nameCol string // "Name" or "Range"
	in      io.Reader
	sc      *input.Scanner
	started bool
	err     error
	ncols   int
	idx     [numCols]int // -1 when absent
	scale   [numCols]model.Scale
	rows    int
}

func newTable(r io.Reader, name, report, nameCol string) table {
	t := table{name: name, report: report, nameCol: nameCol, in: r}
	for i := range t.idx {
		t.idx[i] = -1
	}
	return t
}

func (t *table) syntax(line int, format string, args ...any) *SyntaxError {
	return &SyntaxError{File: t.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// splitUnit splits "Total Time (ns)" into "Total Time" and "ns".
func splitUnit(col string) (base, unit string, ok bool) {
	col = strings.TrimSpace(col)
	if !strings.HasSuffix(col, ")") {
		return col, "", false
	}
	open := strings.LastIndexByte(col, '(')
	if open < 0 {
		return col, "", false
	}
	return strings.TrimSpace(col[:open]), strings.TrimSpace(col[open+1 : len(col)-1]), true
}

// start skips what nsys printed before the CSV and reads the header.
func (t *table) start() error {
	t.sc = input.New(bufio.NewReaderSize(t.in, 64<<10))
	skipped := 0
	for {
		line, ok := t.sc.PeekLine()
		if !ok {
			if err := t.sc.Err(); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			if skipped == 0 {
				return t.syntax(1, "empty input: expected `nsys stats --report %s --format csv` output", t.report)
			}
			return t.syntax(skipped, "no CSV header after %d line(s) of nsys output", skipped)
		}
		l := string(bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF")))
		if strings.HasPrefix(l, "SKIPPED:") {
			return t.syntax(skipped+1, "nsys stats skipped the report: %q (no %s data in the capture: did the capture range open, and was the right API traced?)", strings.TrimSpace(l), t.report)
		}
		if !isPreamble(l) {
			break
		}
		skipped++
		t.sc.SkipLine()
	}
	if !t.sc.Next() {
		if err := t.sc.Err(); err != nil {
			return t.csvErr(err)
		}
		return t.syntax(t.sc.NextLine(), "header row could not be read")
	}
	hdrLine := t.sc.Line()
	fields := t.sc.Fields(nil, -1)
	t.ncols = len(fields)
	for i, f := range fields {
		col := string(f)
		base, unit, hasUnit := splitUnit(col)
		slot, ok := statCols[base]
		switch {
		case ok:
		case col == t.nameCol:
			slot = colName
		case col == "Style":
			slot = colStyle
		default:
			continue // a column this package does not read
		}
		if t.idx[slot] >= 0 {
			return t.syntax(hdrLine, "column %q appears twice", col)
		}
		t.idx[slot] = i
		switch slot {
		case colName, colStyle, colInst:
			continue
		}
		if !hasUnit {
			return t.syntax(hdrLine, "column %q has no unit in parentheses, e.g. %q: cannot tell what its numbers measure", col, base+" (ns)")
		}
		s := model.Lookup(unit)
		want := model.Time
		if slot == colPct {
			want = model.Percent
		}
		if !s.Known || s.Dim != want {
			return t.syntax(hdrLine, "column %q: unit %q is not a %s unit", col, unit, want)
		}
		t.scale[slot] = s
	}
	if t.idx[colName] < 0 {
		return t.syntax(hdrLine, "header has no %q column: not the CSV of nsys stats --report %s", t.nameCol, t.report)
	}
	if t.idx[colTotal] < 0 {
		return t.syntax(hdrLine, "header has no \"Total Time (<unit>)\" column: not the CSV of nsys stats --report %s", t.report)
	}
	return nil
}

func isPreamble(l string) bool {
	if strings.TrimSpace(l) == "" {
		return true
	}
	for _, p := range preamble {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// csvErr turns a scanner error into a positioned one.
func (t *table) csvErr(err error) error {
	var ce *input.Error
	if errors.As(err, &ce) {
		return t.syntax(ce.Line, "%s", ce.Msg)
	}
	return fmt.Errorf("%s: %w", t.name, err)
}

// row is one parsed row, before it is given its report's type.
type row struct {
	name, style string
	v           [numCols]float64
	inst        int64
	line        int
}

// next reads the next row. It returns false at the end of input or on a
// fatal error (in t.err); a malformed row comes back as se.
func (t *table) next() (r row, se *SyntaxError, ok bool) {
	if t.err != nil {
		return r, nil, false
	}
	if !t.started {
		t.started = true
		if err := t.start(); err != nil {
			t.err = err
			return r, nil, false
		}
	}
	if !t.sc.Next() {
		if err := t.sc.Err(); err != nil {
			t.err = t.csvErr(err)
		}
		return r, nil, false
	}
	r.line = t.sc.Line()
	if n := t.sc.NumFields(); n != t.ncols {
		return r, t.syntax(r.line, "row has %d fields, the header has %d (a cut or edited row, or a name with an unquoted comma)", n, t.ncols), true
	}
	r.name = string(t.sc.Field(t.idx[colName]))
	if r.name == "" {
		return r, t.syntax(r.line, "empty %s", t.nameCol), true
	}
	if i := t.idx[colStyle]; i >= 0 {
		r.style = string(t.sc.Field(i))
	}
	for slot := colPct; slot <= colStd; slot++ {
		i := t.idx[slot]
		if i < 0 {
			continue
		}
		text := string(t.sc.Field(i))
		if slot == colInst {
			n, err := strconv.ParseInt(text, 10, 64)
			if err != nil || n < 0 {
				return r, t.syntax(r.line, "%s: Instances %q is not a count", r.name, text), true
			}
			r.inst = n
			continue
		}
		f, err := model.ParseNumber(text)
		switch {
		case err != nil:
			return r, t.syntax(r.line, "%s: column %d: %v", r.name, i+1, err), true
		case f < 0:
			return r, t.syntax(r.line, "%s: column %d: %q is negative", r.name, i+1, text), true
		}
		r.v[slot] = f * t.scale[slot].Factor
	}
	t.rows++
	return r, nil, true
}

// rowReader is the Scanner-shaped reading both stats readers share: each
// row becomes a record by its report's own conversion.
type rowReader struct {
	t    table
	rec  Record
	make func(row) Record
}

// Scan advances to the next record. It returns false at the end of input or
// when the read cannot go on (see Err).
func (r *rowReader) Scan() bool {
	row, se, ok := r.t.next()
	switch {
	case !ok:
		r.rec = nil
		return false
	case se != nil:
		r.rec = se
	default:
		r.rec = r.make(row)
	}
	return true
}

// Record is the current record: the report's row type or a *SyntaxError.
func (r *rowReader) Record() Record { return r.rec }

// Err is the error that ended the read: an I/O error, or a *SyntaxError for
// an input that cannot be read at all. It is nil at a clean end of input.
func (r *rowReader) Err() error { return r.t.err }

// Rows is the number of well-formed rows returned so far.
func (r *rowReader) Rows() int { return r.t.rows }

// KernelSumReader reads the rows of a cuda_gpu_kern_sum CSV: its records
// are *KernelSum or *SyntaxError.
type KernelSumReader struct{ rowReader }

// NewKernelSumReader returns a reader of r; name is used in error messages.
func NewKernelSumReader(r io.Reader, name string) *KernelSumReader {
	return &KernelSumReader{rowReader{t: newTable(r, name, model.NsysReportKernSum, "Name"), make: func(row row) Record {
		return &KernelSum{Name: row.name, TotalNS: row.v[colTotal], AvgNS: row.v[colAvg], MedNS: row.v[colMed],
			MinNS: row.v[colMin], MaxNS: row.v[colMax], StdDevNS: row.v[colStd], Instances: row.inst,
			TimePct: row.v[colPct], Line: row.line}
	}}}
}

// RangeSumReader reads the rows of an nvtx_sum CSV: its records are
// *RangeSum or *SyntaxError.
type RangeSumReader struct{ rowReader }

// NewRangeSumReader returns a reader of r; name is used in error messages.
func NewRangeSumReader(r io.Reader, name string) *RangeSumReader {
	rr := &RangeSumReader{rowReader{t: newTable(r, name, model.NsysReportNVTXSum, "Range")}}
	rr.make = func(row row) Record {
		rng, err := ParseRange(row.name)
		if err != nil {
			return rr.t.syntax(row.line, "%v", err)
		}
		return &RangeSum{Range: row.name, NVTX: rng, Style: row.style, TotalNS: row.v[colTotal], AvgNS: row.v[colAvg],
			MedNS: row.v[colMed], MinNS: row.v[colMin], MaxNS: row.v[colMax], StdDevNS: row.v[colStd],
			Instances: row.inst, TimePct: row.v[colPct], Line: row.line}
	}
	return rr
}

// ReadKernelSums reads a whole cuda_gpu_kern_sum CSV. The first malformed
// row ends it with its positioned error: a top-N is not picked from a file
// that was only partly understood. A header with no rows is an error too.
func ReadKernelSums(r io.Reader, name string) ([]KernelSum, error) {
	kr := NewKernelSumReader(r, name)
	out, err := readAll[KernelSum](&kr.rowReader)
	if err == nil && len(out) == 0 {
		err = &SyntaxError{File: name, Line: kr.t.sc.NextLine(), Msg: "no kernel rows after the header: the capture holds no CUDA kernels"}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadRangeSums reads a whole nvtx_sum CSV; the first malformed row ends it
// with its positioned error. A header with no rows gives no ranges and no
// error.
func ReadRangeSums(r io.Reader, name string) ([]RangeSum, error) {
	return readAll[RangeSum](&NewRangeSumReader(r, name).rowReader)
}

// readAll reads every record; the first *SyntaxError, or the error that
// ended the read, ends it.
func readAll[T any](r *rowReader) ([]T, error) {
	var out []T
	for r.Scan() {
		rec := r.Record()
		if se, ok := rec.(*SyntaxError); ok {
			return nil, se
		}
		if v, ok := any(rec).(*T); ok {
			out = append(out, *v)
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
