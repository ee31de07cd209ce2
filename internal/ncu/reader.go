package ncu

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

// Column names of the exports.
const (
	colID          = "ID"
	colProcessID   = "Process ID"
	colProcessName = "Process Name"
	colHost        = "Host Name"
	colKernel      = "Kernel Name"
	colContext     = "Context"
	colStream      = "Stream"
	colBlock       = "Block Size"
	colGrid        = "Grid Size"
	colDevice      = "Device"
	colCC          = "CC"
	colSection     = "Section Name"
	colMetricName  = "Metric Name"
	colMetricUnit  = "Metric Unit"
	colMetricValue = "Metric Value"
	colRuleName    = "Rule Name"
	colRuleType    = "Rule Type"
	colRuleDesc    = "Rule Description"
	colSpeedupType = "Estimated Speedup Type"
	colSpeedup     = "Estimated Speedup"
)

// maxToolLines bounds the tool and program lines kept from before the header.
const maxToolLines = 200

// What may precede the header: ncu's own lines and the program's output,
// text lines. A longer line, a NUL byte or more in all is not an export
// (deepprof kernels /dev/zero, unbounded, grew without end): a positioned
// error.
const (
	maxPreHeaderLine = 1 << 20
	maxPreHeader     = 1 << 30
)

// maxIntern bounds the interned kernel names and NVTX stacks, so that memory
// stays bounded on inputs with ever-new names.
const maxIntern = 1 << 16

// Options select what a Reader keeps beyond the launch's identity and duration.
type Options struct {
	// Metrics are raw-page columns to read into Launch.Metrics besides the
	// duration. Details pages keep every metric row whatever this says.
	Metrics []string
}

type rawCol struct {
	idx   int
	name  string
	scale model.Scale
}

// Reader reads launches from one export.
type Reader struct {
	name string
	in   io.Reader
	sc   *input.Scanner
	opts Options

	started bool
	format  model.Format
	header  []string
	cols    map[string]int
	ncols   int
	// minFields is the fewest fields a details row may have: metric rows
	// stop after Metric Value, leaving the rule columns out.
	minFields int
	raw       []rawCol

	rec Record
	err error
	eof bool

	cur       *model.Launch // details: the launch being assembled
	prevID    int64
	toolLines []string
	preHeader int64 // bytes read before the header
	nTool     int
	launches  int

	names   map[string]string
	lastVal []string // per column, the last interned value
	stacks  map[string]*model.Stack
	scales  map[string]model.Scale
}

// NewReader returns a Reader of r; name is used in error messages. Gzip input
// is recognized by its magic bytes.
func NewReader(r io.Reader, name string, opts Options) *Reader {
	return &Reader{name: name, in: r, opts: opts, prevID: -1,
		names: map[string]string{}, stacks: map[string]*model.Stack{}, scales: map[string]model.Scale{},
	}
}

// Format is the export's shape; valid once Scan has been called.
func (r *Reader) Format() model.Format { return r.format }

// Header is the export's column names; valid once Scan has been called.
func (r *Reader) Header() []string { return r.header }

// ToolLines are the lines before the header (==PROF== lines, the workload's
// output), the first 200 of them.
func (r *Reader) ToolLines() []string { return r.toolLines }

// Launches is the number of launches returned so far.
func (r *Reader) Launches() int { return r.launches }

// Record is the current record: a *model.Launch or a *model.SyntaxError. A Launch may be
// reused by the next call to Scan only through its interned strings; the
// struct itself is new each time.
func (r *Reader) Record() Record { return r.rec }

// Err is the error that ended the read: an I/O error, or a
// *model.SyntaxError for an input that cannot be read at all. It is nil at a clean end of input.
func (r *Reader) Err() error { return r.err }

func (r *Reader) syntax(line int, format string, args ...any) *model.SyntaxError {
	return &model.SyntaxError{File: r.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Scan advances to the next record. It returns false at the end of input or
// when the read cannot go on (see Err).
func (r *Reader) Scan() bool {
	if r.err != nil {
		return false
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			r.err = err
			return false
		}
	}
	if r.format == model.FormatDetails {
		return r.scanDetails()
	}
	return r.scanRaw()
}

// start opens the input, skips what precedes the header, reads the header and
// (raw page) the units row.
func (r *Reader) start() error {
	br := bufio.NewReaderSize(r.in, 64<<10)
	in := io.Reader(br)
	if input.IsGzip(br) {
		zr, err := input.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		in = zr
	}
	r.sc = input.New(in)

	for {
		line, ok := r.sc.PeekLineLimit(maxPreHeaderLine)
		if !ok {
			if err := r.sc.Err(); err != nil {
				return fmt.Errorf("%s: %w", r.name, err)
			}
			return r.noHeader()
		}
		l := bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		if bytes.HasPrefix(l, []byte(`"ID",`)) || bytes.HasPrefix(l, []byte("ID,")) {
			break
		}
		r.nTool++
		r.preHeader += int64(len(line)) + 1
		switch {
		case len(line) > maxPreHeaderLine:
			return r.syntax(r.sc.NextLine(), "a line of more than %d KiB before the CSV header: not an ncu --csv export or log", maxPreHeaderLine>>10)
		case bytes.IndexByte(line, 0) >= 0:
			return r.syntax(r.sc.NextLine(), "binary data (a NUL byte) before the CSV header: not an ncu --csv export or log")
		case r.preHeader > maxPreHeader:
			return r.syntax(r.sc.NextLine(), "more than %d MiB before the CSV header: not an ncu --csv export or log", maxPreHeader>>20)
		}
		if len(r.toolLines) < maxToolLines {
			r.toolLines = append(r.toolLines, string(l))
		}
		r.sc.SkipLine()
	}
	if !r.sc.Next() {
		return r.ioOr(r.syntax(r.sc.NextLine(), "header row could not be read"))
	}
	hdrLine := r.sc.Line()
	fields := r.sc.Fields(nil, -1)
	r.header = make([]string, len(fields))
	r.cols = make(map[string]int, len(fields))
	for i, f := range fields {
		r.header[i] = string(f)
		if _, dup := r.cols[r.header[i]]; !dup {
			r.cols[r.header[i]] = i
		}
	}
	r.ncols = len(fields)
	r.lastVal = make([]string, r.ncols)
	if _, ok := r.cols[colKernel]; !ok {
		return r.syntax(hdrLine, "header has no %q column: not an ncu --csv export of the raw or details page", colKernel)
	}
	_, hasName := r.cols[colMetricName]
	_, hasValue := r.cols[colMetricValue]
	if hasName && hasValue {
		r.format = model.FormatDetails
		// Metric rows end after Metric Value; rule rows fill every column.
		r.minFields = r.cols[colMetricValue] + 1
		return nil
	}
	r.format = model.FormatRaw
	durIdx, ok := r.cols[model.DurationMetric]
	if !ok {
		return r.syntax(hdrLine, "raw page has no %s column: profile with --metrics %s, or a section set that collects it (basic, full, roofline)", model.DurationMetric, model.DurationMetric)
	}
	// The units row.
	if !r.sc.Next() {
		if err := r.sc.Err(); err != nil {
			return r.csvErr(err)
		}
		return r.syntax(r.sc.NextLine(), "no units row after the header: the raw page writes one (was the file cut?)")
	}
	unitsLine := r.sc.Line()
	unitsRow := r.sc.Fields(nil, -1)
	if len(unitsRow) != r.ncols {
		return r.syntax(unitsLine, "units row has %d fields, the header has %d", len(unitsRow), r.ncols)
	}
	if len(unitsRow[0]) != 0 {
		return r.syntax(unitsLine, "no units row after the header (found a row with ID %q): the raw page writes units under the header, and without them durations cannot be read", unitsRow[0])
	}
	add := func(idx int, name string) {
		r.raw = append(r.raw, rawCol{idx: idx, name: name, scale: model.Lookup(string(unitsRow[idx]))})
	}
	dscale := model.Lookup(string(unitsRow[durIdx]))
	if dscale.Dim != model.Time {
		return r.syntax(unitsLine, "%s has unit %q, not a time unit", model.DurationMetric, unitsRow[durIdx])
	}
	add(durIdx, model.DurationMetric)
	for _, m := range r.opts.Metrics {
		if m == model.DurationMetric {
			continue
		}
		if idx, ok := r.cols[m]; ok {
			add(idx, m)
		}
	}
	// Split rows only as far as the last column read.
	last := 0
	for _, name := range []string{colID, colProcessID, colProcessName, colHost, colKernel, colContext,
		colStream, colBlock, colGrid, colDevice, colCC, NVTXColumn, StartStopColumn} {
		if idx, ok := r.cols[name]; ok {
			last = max(last, idx)
		}
	}
	for _, c := range r.raw {
		last = max(last, c.idx)
	}
	r.sc.SetFieldLimit(last+1, r.ncols)
	return nil
}

// noHeader explains an input without a CSV header.
func (r *Reader) noHeader() error {
	line := r.sc.NextLine()
	if r.nTool == 0 {
		return r.syntax(1, "empty input: expected an ncu --csv export")
	}
	prof := 0
	for _, l := range r.toolLines {
		if strings.HasPrefix(l, "==") {
			prof++
		}
	}
	last := line - 1
	if prof > 0 {
		for _, l := range r.toolLines {
			if strings.Contains(l, "No kernels were profiled") {
				return r.syntax(last, "no CSV data: ncu says %q (an NVTX or kernel filter that matched nothing?)", strings.TrimSpace(l))
			}
		}
		return r.syntax(last, "no CSV data, only %d ==PROF== line(s): ncu profiled no kernels, or wrote its data to a report file (-o) instead of this log", prof)
	}
	return r.syntax(last, "no CSV header (a line starting with \"ID\",) in %d line(s)", r.nTool)
}

func (r *Reader) ioOr(err error) error {
	if e := r.sc.Err(); e != nil {
		return r.csvErr(e)
	}
	return err
}

// csvErr turns a scanner error into a positioned one.
func (r *Reader) csvErr(err error) error {
	var ce *input.Error
	if errors.As(err, &ce) {
		return r.syntax(ce.Line, "%s", ce.Msg)
	}
	return fmt.Errorf("%s: %w", r.name, err)
}

// next reads the next row's fields. It returns false at the end of input or
// on a fatal error (set in r.err); a malformed row is returned as rowErr.
func (r *Reader) next() (ok bool, rowErr *model.SyntaxError) {
	if !r.sc.Next() {
		if err := r.sc.Err(); err != nil {
			r.err = r.csvErr(err)
		}
		return false, nil
	}
	n := r.sc.NumFields()
	if n != r.ncols && (r.format != model.FormatDetails || n < r.minFields || n > r.ncols) {
		return true, r.syntax(r.sc.Line(), "row has %d fields, the header has %d (a truncated or edited row)", n, r.ncols)
	}
	return true, nil
}

func (r *Reader) scanRaw() bool {
	ok, rowErr := r.next()
	if !ok {
		return false
	}
	if rowErr != nil {
		r.rec = rowErr
		return true
	}
	l, se := r.identity()
	if se != nil {
		r.rec = se
		return true
	}
	if l.ID <= r.prevID {
		r.rec = r.syntax(l.Line, "launch ID %d follows ID %d: IDs of an export increase (a repeated or pasted row?)", l.ID, r.prevID)
		return true
	}
	r.prevID = l.ID
	l.Metrics = make([]model.Metric, 0, len(r.raw))
	for _, c := range r.raw {
		v, err := parseMetric(c.scale, string(r.sc.Field(c.idx)), c.name == model.DurationMetric)
		if err != nil {
			r.rec = r.syntax(l.Line, "launch %d: %s: %v", l.ID, c.name, err)
			return true
		}
		l.Metrics = append(l.Metrics, model.Metric{Name: c.name, Value: v})
	}
	if se := r.setDuration(l); se != nil {
		r.rec = se
		return true
	}
	r.launches++
	r.rec = l
	return true
}

// identity reads the launch columns of the current row.
func (r *Reader) identity() (*model.Launch, *model.SyntaxError) {
	line := r.sc.Line()
	idText := r.field(colID)
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 0 {
		return nil, r.syntax(line, "ID %q is not a launch number", idText)
	}
	l := &model.Launch{Line: line, ID: id}
	if t := r.field(colProcessID); t != "" {
		if l.ProcessID, err = strconv.ParseInt(t, 10, 64); err != nil {
			return nil, r.syntax(line, "launch %d: Process ID %q is not an integer", id, t)
		}
	}
	l.ProcessName = r.intern(colProcessName)
	l.Host = r.intern(colHost)
	l.Kernel = r.intern(colKernel)
	l.Context = r.intern(colContext)
	l.Stream = r.intern(colStream)
	l.BlockSize = r.intern(colBlock)
	l.GridSize = r.intern(colGrid)
	if _, ok := r.cols[colKernel]; ok && strings.TrimSpace(l.Kernel) == "" {
		return nil, r.syntax(line, "launch %d: Kernel Name is empty: every launch names its kernel", id)
	}
	if t := r.field(colDevice); t != "" {
		d, err := strconv.ParseUint(t, 10, 31)
		if err != nil {
			return nil, r.syntax(line, "launch %d: Device %q is not a device number (0, 1, ...)", id, t)
		}
		l.Device = model.DeviceID(d)
	}
	l.CC = r.intern(colCC)
	l.StartStop = r.intern(StartStopColumn)
	if idx, ok := r.cols[NVTXColumn]; ok {
		// The cache is keyed by the cell as written, so that a known stack
		// costs neither unescaping nor parsing.
		raw, _ := r.sc.RawField(idx)
		if st, ok := r.stacks[string(raw)]; ok {
			l.NVTX = st
		} else {
			st, err := ParseStack(string(r.sc.Field(idx)))
			if err != nil {
				return nil, r.syntax(line, "launch %d: %v", id, err)
			}
			if len(r.stacks) < maxIntern {
				r.stacks[string(raw)] = st
			}
			l.NVTX = st
		}
	}
	return l, nil
}

func (r *Reader) field(col string) string {
	if idx, ok := r.cols[col]; ok {
		return string(r.sc.Field(idx))
	}
	return ""
}

func (r *Reader) intern(col string) string {
	idx, ok := r.cols[col]
	if !ok {
		return ""
	}
	b := r.sc.Field(idx)
	// Most columns repeat the previous row's value: compare before hashing.
	if idx < len(r.lastVal) && r.lastVal[idx] == string(b) {
		return r.lastVal[idx]
	}
	v, ok := r.names[string(b)]
	if !ok {
		v = string(b)
		if len(r.names) < maxIntern {
			r.names[v] = v
		}
	}
	if idx < len(r.lastVal) {
		r.lastVal[idx] = v
	}
	return v
}

// setDuration picks the launch's duration from its metrics:
// gpu__time_duration.sum, else the SOL section's Duration.
func (r *Reader) setDuration(l *model.Launch) *model.SyntaxError {
	pick := -1
	for i, m := range l.Metrics {
		if m.Name == model.DurationMetric {
			pick = i
			break
		}
		if m.Name == model.SOLDurationMetric && m.Section == model.SOLSection && pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		return nil
	}
	m := l.Metrics[pick]
	if !m.Value.Valid {
		return r.syntax(l.Line, "launch %d: %s is %q, not a duration", l.ID, m.Name, m.Value.Orig)
	}
	if m.Value.Unit != model.Lookup("ns").Base {
		return r.syntax(l.Line, "launch %d: %s has unit %q, not a time unit", l.ID, m.Name, m.Value.OrigUnit)
	}
	l.Duration = m.Value
	l.DurationMetric = m.Name
	return nil
}

func (r *Reader) scale(unit []byte) model.Scale {
	if s, ok := r.scales[string(unit)]; ok {
		return s
	}
	s := model.Lookup(string(unit))
	if len(r.scales) < maxIntern {
		r.scales[s.Spelling] = s
	}
	return s
}

// scanDetails assembles one launch from its consecutive rows.
func (r *Reader) scanDetails() bool {
	for {
		if r.eof {
			return r.flush(nil)
		}
		ok, rowErr := r.next()
		if !ok {
			r.eof = true
			if r.err != nil {
				return false
			}
			return r.flush(nil)
		}
		if rowErr != nil {
			r.rec = rowErr
			return true
		}
		line := r.sc.Line()
		idText := r.field(colID)
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || id < 0 {
			r.rec = r.syntax(line, "ID %q is not a launch number", idText)
			return true
		}
		if r.cur == nil || id != r.cur.ID {
			last := r.prevID
			if r.cur != nil {
				last = r.cur.ID
			}
			if id <= last {
				r.rec = r.syntax(line, "launch ID %d follows ID %d: a details page lists each launch's rows together, IDs increasing", id, last)
				return true
			}
			l, se := r.identity()
			if se != nil {
				r.rec = se
				return true
			}
			prev := r.cur
			r.cur = l
			if se := r.addDetailRow(l); se != nil {
				r.rec = se
				return true
			}
			if prev != nil {
				return r.flush(prev)
			}
			continue
		}
		if se := r.addDetailRow(r.cur); se != nil {
			r.rec = se
			return true
		}
	}
}

// flush returns a finished details launch (prev, or at the end r.cur).
func (r *Reader) flush(prev *model.Launch) bool {
	l := prev
	if l == nil {
		l = r.cur
		r.cur = nil
		if l == nil {
			return false
		}
	}
	r.prevID = l.ID
	if se := r.setDuration(l); se != nil {
		r.rec = se
		return true
	}
	r.launches++
	r.rec = l
	return true
}

func (r *Reader) addDetailRow(l *model.Launch) *model.SyntaxError {
	name := r.field(colMetricName)
	ruleName := r.field(colRuleName)
	section := r.intern(colSection)
	if name == "" {
		if ruleName != "" {
			l.Rules = append(l.Rules, model.Rule{Section: section, Name: ruleName, Type: r.field(colRuleType),
				Description: r.field(colRuleDesc), SpeedupType: r.field(colSpeedupType), Speedup: r.field(colSpeedup)})
		}
		return nil
	}
	var unit []byte
	if idx, ok := r.cols[colMetricUnit]; ok {
		unit = r.sc.Field(idx)
	}
	v, err := parseMetric(r.scale(unit), r.field(colMetricValue), name == model.DurationMetric)
	if err != nil {
		return r.syntax(r.sc.Line(), "launch %d: %s: %v", l.ID, name, err)
	}
	l.Metrics = append(l.Metrics, model.Metric{Section: section, Name: r.intern(colMetricName), Value: v})
	return nil
}

// parseMetric reads a metric value. A unitless metric may hold text (ncu
// writes enums such as "PolicySpread"): it is kept with Valid false. A
// duration, or any metric with a unit, must be a number.
func parseMetric(sc model.Scale, text string, isDuration bool) (model.Value, error) {
	v, err := sc.Parse(text)
	if err != nil && sc.Dim == model.Unitless && !isDuration {
		return v, nil
	}
	return v, err
}
