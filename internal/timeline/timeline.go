package timeline

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ianlancetaylor/demangle"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/input"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// Timeline is the records of one or more CUDA processes.
type Timeline struct {
	Processes []*Process // by process id
	// OriginNS is the earliest timestamp of any record: where a trace's
	// time axis starts.
	OriginNS int64
	// Notes say what was read but holds nothing, such as an empty file.
	Notes []string
	// GPUs are the run's GPUs where the records name them (device notes)
	// and the processes need one numbering (numberDevices); nil otherwise,
	// and devices are the ordinals each process saw.
	GPUs []GPU
}

// GPU is one GPU of a run whose devices are numbered across its processes.
type GPU struct {
	Device  uint32 // the number the timeline gives it
	UUID    string // "GPU-...", "" when a process could not read it
	Machine string // cupti.Header.Machine of its processes
	Ranks   []int  // the global ranks ($RANK) of the processes that used it
}

// Process is one process's records, in time order and attributed.
type Process struct {
	File   string
	Header cupti.Header
	// Truncation is "" for a complete file, else how it was cut short
	// (cupti.Reader.Truncation).
	Truncation string
	End        *cupti.End // nil when cut short
	Notes      []cupti.Note
	Kernels    []KernelExecution // by start, then correlation
	// Functions are the functions of the process's kernel records, each
	// once (KernelExecution.Fn); a kernel left out may leave one unused.
	Functions []*Function
	Copies    []Copy   // memcpys and memsets, by start
	APIs      []API    // by start; one per correlation id
	Calls     []Call   // the functions the APIs called, each once (API.Call)
	Ranges    []*Range // every range instance, push/pop and start/end, by start
	// RangeList is every range a kernel was ever set in (SetRange), in
	// the order first set (KernelExecution.Range): its indexes hold
	// however Ranges is sorted or cut; a range no kernel is in any longer
	// may stay listed.
	RangeList []*Range
	Marks     []cupti.NVTX
	// Problems are what attribution could not make sense of, with lines.
	Problems []string
	// Anomalies are what in the file changes the numbers made from it
	// (dropped or duplicated records, impossible times, ranges that do not
	// pair up), each also a problem.
	Anomalies []Anomaly
	// KeptMangled is the number of kernel names left as recorded because
	// demangling them would pass the demangler's budget (MaxDemangled).
	KeptMangled int
	// Unattributed is the number of kernels whose launch call is missing.
	Unattributed int
	// SharedCorrelation is the number of A records left out because
	// another A of their correlation id started earlier (a runtime launch
	// and the driver call it makes; see the package doc).
	SharedCorrelation int
	// Measured are the launches the library measured (M and W records), by
	// correlation id; every time of the process has their measuring
	// windows cut out (Cut).
	Measured []Measurement
	cuts     cuts
}

// Anomaly is one thing in a record file that changes the numbers made from
// it. Ranged says it is about an NVTX range of Domain ("" the default
// domain): it changes the numbers of the ranges in that domain.
type Anomaly struct {
	Msg    string
	Ranged bool
	Domain string
}

// MaxKernelNS is the longest a kernel record may last: one hour. A longer
// one (or one that ends before it starts) is an impossible time, left out.
const MaxKernelNS = int64(3600e9)

// Anomalies are the timeline's anomalies that change the numbers of a
// program whose ranges are in domain: every one not about a range, and
// those about ranges of domain (a library's own ranges, NCCL's pushed and
// never popped, change none of the program's).
func (tl *Timeline) Anomalies(domain string) []string {
	var out []string
	launches := 0
	for _, p := range tl.Processes {
		launches += len(p.Kernels)
		if p.Truncation != "" {
			out = append(out, fmt.Sprintf("%s: cut short (%s): its process's numbers stop at its last flushed record", p.File, p.Truncation))
		}
		for _, a := range p.Anomalies {
			if !a.Ranged || a.Domain == domain {
				out = append(out, a.Msg)
			}
		}
	}
	if launches == 0 && len(tl.Notes) > 0 {
		// Files with nothing in them and no process that launched a
		// kernel: the recording is gone, not a program without kernels.
		for _, n := range tl.Notes {
			out = append(out, n+": no process of the run recorded a kernel")
		}
	}
	return out
}

// Notices say what the reading changed that changes no number (kernel
// names left as recorded: KeptMangled) and what it took out of the run on
// purpose: deepprof's own measuring (Measured).
func (tl *Timeline) Notices() []string {
	var out []string
	for _, p := range tl.Processes {
		if n := p.measuredNotice(); n != "" {
			out = append(out, n)
		}
		if p.KeptMangled > 0 {
			out = append(out, fmt.Sprintf("%s: %d kernel name(s) left mangled as recorded: demangling them passes the demangler's budget (%d bytes of name, %d of result)",
				p.File, p.KeptMangled, MaxDemangled, MaxDemangledOut))
		}
	}
	return out
}

// KernelExecution is one kernel execution (a K record) and where it came
// from. It holds no pointer (the collector need not scan a process's
// kernels): its function, launch call and range are indexes into its
// process's (Process.Fn, Process.APIOf, Process.RangeOf).
type KernelExecution struct {
	Start, End  int64 // ns; End >= Start
	Line        Line
	Correlation uint32
	// Fn is what ran and on which stream: its index in Process.Functions,
	// one value shared by every launch of the same.
	Fn uint32
	// API is the launch call's index in Process.APIs, plus one (0: the
	// call is missing).
	API uint32
	// Range is the innermost push/pop range open on the launching thread
	// when it was launched: its index in Process.RangeList, plus one (0:
	// outside every range).
	Range uint32
}

// Line is a record's line in its file. A file of more lines (some 200 GB
// of records) is refused (MaxLines).
type Line int32

// MaxLines is the most lines a record file may have.
const MaxLines = math.MaxInt32

// Function is the fields of a K record that its launches share: the
// kernel's function and launch configuration, and the stream it ran on.
type Function struct {
	Device, Context, Stream     uint32
	Grid, Block                 cupti.Dim3
	Registers                   uint32 // per thread
	StaticShared, DynamicShared uint32 // bytes
	Mangled, Demangled          string
	// gridSize and blockSize are Grid and Block as ncu writes them, made
	// once where the timeline makes the function ("": not made).
	gridSize, blockSize string
}

// Shape is the function's grid and block as ncu's Grid Size and Block Size
// columns write them: "(256, 1, 1)".
func (f *Function) Shape() (grid, block string) {
	if f.gridSize == "" {
		return f.Grid.String(), f.Block.String()
	}
	return f.gridSize, f.blockSize
}

// Name is the kernel's name as deepprof reports it: the demangled name, or
// the mangled one when CUPTI gave no demangled form.
func (f *Function) Name() string {
	if f.Demangled != "" {
		return f.Demangled
	}
	return f.Mangled
}

// API is one runtime or driver call (an A record).
// It holds no pointer (the collector need not scan a process's calls):
// which function it called is an index into the process's Calls
// (Process.CallOf).
type API struct {
	Start, End  int64 // CPU times, ns
	Thread      int64 // OS thread id, as in NVTX records
	Line        Line
	Correlation uint32
	// Call is its function's index in Process.Calls, plus one (0: none).
	Call uint32
	// Kernels is how many of the process's kernels it launched: one for a
	// kernel launch, several for a graph launch, none for a copy.
	Kernels int32
}

// CallOf is the function a called; nil where none is recorded.
func (p *Process) CallOf(a *API) *Call {
	if a.Call == 0 || int(a.Call) > len(p.Calls) {
		return nil
	}
	return &p.Calls[a.Call-1]
}

// Fn is the function k ran.
func (p *Process) Fn(k *KernelExecution) *Function { return p.Functions[k.Fn] }

// APIOf is k's launch call; nil where it is missing.
func (p *Process) APIOf(k *KernelExecution) *API {
	if k.API == 0 {
		return nil
	}
	return &p.APIs[k.API-1]
}

// RangeOf is the innermost push/pop range k was launched in; nil outside
// every range.
func (p *Process) RangeOf(k *KernelExecution) *Range {
	if k.Range == 0 {
		return nil
	}
	return p.RangeList[k.Range-1]
}

// SetRange makes r (nil: none) the innermost push/pop range k was
// launched in.
func (p *Process) SetRange(k *KernelExecution, r *Range) {
	if r == nil {
		k.Range = 0
		return
	}
	if r.listed == 0 {
		p.RangeList = append(p.RangeList, r)
		r.listed = uint32(len(p.RangeList))
	}
	k.Range = r.listed
}

// Call is which API function a call is, shared by every call of it.
type Call struct {
	Kind     cupti.APIKind
	CBID     uint32 // CUPTI callback id
	Function string
}

// Copy is one memcpy (Kind set) or memset (Kind "").
type Copy struct {
	Line                    int
	Start, End              int64
	Device, Context, Stream uint32
	Correlation             uint32
	Kind                    cupti.CopyKind // "" for a memset
	Bytes                   uint64
	API                     *API
	Range                   *Range
}

// RangeKind says how a range was opened.
type RangeKind string

// The range kinds.
const (
	PushPop  RangeKind = "push/pop"
	StartEnd RangeKind = "start/end"
)

// Range is one instance of an NVTX range.
type Range struct {
	Kind         RangeKind
	Domain, Name string // Domain "" for the default domain
	Thread       int64  // the thread that pushed or started it
	EndThread    int64  // the thread that popped or ended it
	ID           uint64
	Start, End   int64 // CPU times, ns; End valid when Closed
	Closed       bool
	// Inferred is true for a range deepprof found in the kernel stream
	// (package phases, InferPhases), not one the program pushed.
	Inferred bool
	Line     int    // the line that opened it
	Parent   *Range // push/pop: the enclosing range on its thread
	Depth    int    // push/pop: 1 for an outermost range; start/end: 0
	// listed is r's index in its process's RangeList, plus one (0: not
	// listed).
	listed uint32
	// capped is r's ancestor at depth model.MaxRangeDepth+1, r itself when
	// it is not deeper (setDepth): where Levels starts, in constant time
	// however deep r is.
	capped *Range
	// stack is the NVTX stack of the kernels launched in r (Stack), made
	// at the first ask.
	stack atomic.Pointer[model.Stack]
}

// Stack is the NVTX stack of the kernels launched in r, as a launch
// (model.Launch.NVTX) holds it: one value for every launch of r, made at
// the first ask (analyses that read a timeline at once may ask together).
func (r *Range) Stack() *model.Stack {
	if st := r.stack.Load(); st != nil {
		return st
	}
	st := &model.Stack{Thread: r.Thread, Levels: r.Levels()}
	if r.stack.CompareAndSwap(nil, st) {
		return st
	}
	return r.stack.Load()
}

// Ancestor is the range's enclosing range at depth d (itself at its own
// depth), or nil when it is not that deep.
func (r *Range) Ancestor(d int) *Range {
	if r == nil || d < 1 || r.Depth < d {
		return nil
	}
	for r.Depth > d {
		r = r.Parent
	}
	return r
}

// Builder collects the records of one or more files, then builds the
// Timeline.
type Builder struct {
	procs map[processKey]*building
	notes []string
}

// processKey tells processes apart: their machine (host and node, for runs
// of several nodes, whose process ids can repeat) and process id.
type processKey struct {
	machine string
	pid     int64
}

type building struct {
	p       *Process
	kernels chunks[KernelExecution]
	nvtx    chunks[cupti.NVTX]
	// apis is every A record read, in file order; build keeps one per
	// correlation id.
	apis      chunks[API]
	functions map[Function]uint32 // index in p.Functions
	calls     map[Call]uint32     // index in p.Calls, plus one
	metrics   []cupti.Metric
	windows   []cupti.Window
	// demangledBytes is the length of the mangled names demangled so far
	// (MaxDemangledPerProcess).
	demangledBytes int
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{procs: map[processKey]*building{}} }

// Load builds the timeline of a run's CUPTI record files, named by their
// paths relative to the run directory (open opens one as it is stored);
// dir is their folder, for the error of a run that has none.
func Load(dir string, files []string, open func(rel string) (io.ReadCloser, error)) (*Timeline, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w: no cupti-<pid>.tsv in it", dir, fs.ErrNotExist)
	}
	return readFiles(files, open)
}

// ReadFiles reads and builds the record files at paths.
func ReadFiles(paths ...string) (*Timeline, error) {
	return readFiles(paths, func(p string) (io.ReadCloser, error) { return os.Open(p) })
}

// readFiles reads the record files named in files (open opens each one)
// at once, up to one a core, and builds them. The first error in
// files' order is the one returned.
func readFiles(files []string, open func(name string) (io.ReadCloser, error)) (*Timeline, error) {
	type result struct {
		bp   *building
		note string
		err  error
	}
	res := make([]result, len(files))
	inParallel(len(files), func(i int) {
		f, err := open(files[i])
		if err != nil {
			res[i].err = err
			return
		}
		defer f.Close()
		res[i].bp, res[i].note, res[i].err = read(f, files[i])
	})
	b := NewBuilder()
	for _, r := range res {
		if r.err == nil {
			r.err = b.add(r.bp, r.note)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	return b.Build()
}

// inParallel calls do(0) ... do(n-1), up to one call a core at once.
func inParallel(n int, do func(i int)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			do(i)
		}()
	}
	wg.Wait()
}

// Read reads one record file. The first malformed line ends it with its
// positioned error: a timeline is not made from a file only partly
// understood. A file cut short is read as far as it goes; an empty one
// (the process wrote nothing) adds nothing.
func (b *Builder) Read(r io.Reader, name string) error {
	bp, note, err := read(r, name)
	if err != nil {
		return err
	}
	return b.add(bp, note)
}

// add adds the process of one file read (read), or its note when the
// file held none.
func (b *Builder) add(bp *building, note string) error {
	if bp == nil {
		b.notes = append(b.notes, note)
		return nil
	}
	h := bp.p.Header
	key := processKey{h.Machine(), h.PID}
	if prev, dup := b.procs[key]; dup {
		return &cupti.SyntaxError{File: bp.p.File, Line: h.Line, Msg: fmt.Sprintf("process %d has a second record file (the first is %s)", h.PID, prev.p.File)}
	}
	b.procs[key] = bp
	return nil
}

// read reads one record file into a process of its own: nil, with a note
// saying so, for a file that holds none.
func read(r io.Reader, name string) (*building, string, error) {
	in, err := OpenRecords(r, name)
	if err != nil {
		return nil, "", err
	}
	rd := cupti.NewParallelReader(in, name, parseWorkers())
	// Every record is copied into the process below, none kept.
	rd.ReuseRecords()
	defer rd.Close()
	var bp *building
	records := uint64(0) // every record between the header and the end line
	for rd.Scan() {
		switch rd.Record().(type) {
		case *cupti.Header, *cupti.End, *cupti.SyntaxError:
		default:
			records++
		}
		switch rec := rd.Record().(type) {
		case *cupti.SyntaxError:
			return nil, "", rec
		case *cupti.Header:
			bp = &building{p: &Process{File: name, Header: *rec}, functions: map[Function]uint32{}, calls: map[Call]uint32{}}
		case *cupti.KernelRecord:
			if rec.Line > MaxLines {
				return nil, "", tooLong(name, rec.Line)
			}
			bp.kernels.add(KernelExecution{Line: Line(rec.Line), Start: rec.Start, End: rec.End,
				Correlation: rec.Correlation, Fn: bp.function(rec)})
		case *cupti.Memcpy:
			bp.p.Copies = append(bp.p.Copies, Copy{Line: rec.Line, Start: rec.Start, End: rec.End, Device: rec.Device,
				Context: rec.Context, Stream: rec.Stream, Correlation: rec.Correlation, Kind: rec.Kind, Bytes: rec.Bytes})
		case *cupti.Memset:
			bp.p.Copies = append(bp.p.Copies, Copy{Line: rec.Line, Start: rec.Start, End: rec.End, Device: rec.Device,
				Context: rec.Context, Stream: rec.Stream, Correlation: rec.Correlation, Bytes: rec.Bytes})
		case *cupti.API:
			if rec.Line > MaxLines {
				return nil, "", tooLong(name, rec.Line)
			}
			bp.apis.add(API{Line: Line(rec.Line), Start: rec.Start, End: rec.End, Thread: rec.Thread,
				Correlation: rec.Correlation, Call: bp.call(rec)})
		case *cupti.NVTX:
			if rec.Kind == cupti.NVTXMark {
				bp.p.Marks = append(bp.p.Marks, *rec)
			} else {
				bp.nvtx.add(*rec)
			}
		case *cupti.Metric:
			bp.metrics = append(bp.metrics, *rec)
		case *cupti.Window:
			bp.windows = append(bp.windows, *rec)
		case *cupti.Note:
			bp.p.Notes = append(bp.p.Notes, *rec)
		case *cupti.End:
			bp.p.End = rec
		}
	}
	if err := rd.Err(); err != nil {
		return nil, "", err
	}
	if bp == nil {
		return nil, name + ": " + rd.Truncation(), nil
	}
	bp.p.Truncation = rd.Truncation()
	bp.p.checkCounts(records)
	return bp, "", nil
}

// parseWorkers is how many goroutines parse one record file's lines: one
// per core but the one that cuts the lines, at least 2 and at most 8
// (about what one cutting goroutine keeps busy); on one core the lines
// are parsed in sequence (NewParallelReader under 2).
func parseWorkers() int {
	if runtime.GOMAXPROCS(0) < 2 {
		return 1
	}
	return max(2, min(runtime.GOMAXPROCS(0)-1, 8))
}

func tooLong(name string, line int) error {
	return &cupti.SyntaxError{File: name, Line: line, Msg: fmt.Sprintf("more than %d lines: a timeline reads files of at most that many", MaxLines)}
}

// function is k's Function's index in the process's Functions, the one
// value of its kind in the process.
func (bp *building) function(k *cupti.KernelRecord) uint32 {
	f := Function{Device: k.Device, Context: k.Context, Stream: k.Stream, Grid: k.Grid, Block: k.Block, Registers: k.Registers, StaticShared: k.StaticShared,
		DynamicShared: k.DynamicShared, Mangled: k.Mangled, Demangled: k.Demangled}
	i, ok := bp.functions[f]
	if !ok {
		p := new(Function)
		*p = f
		p.gridSize, p.blockSize = f.Grid.String(), f.Block.String()
		switch {
		case f.Demangled != "" && f.Demangled != f.Mangled || !strings.HasPrefix(f.Mangled, "_Z"):
		case bp.demangledBytes+len(f.Mangled) > MaxDemangledPerProcess:
			bp.p.KeptMangled++
		default:
			bp.demangledBytes += len(f.Mangled)
			var kept bool
			if p.Demangled, kept = demangled(f.Mangled, f.Demangled); kept {
				bp.p.KeptMangled++
			}
		}
		i = uint32(len(bp.p.Functions))
		bp.p.Functions = append(bp.p.Functions, p)
		bp.functions[f] = i
	}
	return i
}

// The demangler's budget. Its work grows with a name's nesting and its
// output with the name's back references (each level can double it), so a
// hostile record could make it run for minutes: a mangled name longer than
// MaxDemangled, or one whose demangled name would pass MaxDemangledOut,
// keeps CUPTI's spelling (Process.KeptMangled counts them), as do the
// names of a record file past MaxDemangledPerProcess. The longest
// kernel name of the recorded runs is a third of MaxDemangled.
const (
	MaxDemangled    = 4 << 10
	maxDemangledPow = 16
	MaxDemangledOut = 1 << maxDemangledPow
	// MaxDemangledPerProcess bounds the names one record file has
	// demangled here, in bytes of mangled name: 64 names at the limit.
	MaxDemangledPerProcess = 64 * MaxDemangled
)

// demangled is a kernel's demangled name: CUPTI's, or, where CUPTI left
// the name mangled (it does for some long CUTLASS and CuTe names: no
// demangled name, or the mangled one again), the name demangled here in
// the C++ runtime's spelling, as CUPTI writes the others. A name that does
// not demangle stays as CUPTI gave it; so does one past the budget, and
// kept says so.
func demangled(mangled, given string) (name string, kept bool) {
	if given != "" && given != mangled || !strings.HasPrefix(mangled, "_Z") {
		return given, false
	}
	if len(mangled) > MaxDemangled {
		return given, true
	}
	d, err := demangle.ToString(mangled, demangle.MaxLength(maxDemangledPow))
	switch {
	case err != nil:
		return given, false
	case len(d) >= MaxDemangledOut: // cut at the budget
		return given, true
	}
	return d, false
}

// DemangledName is a kernel name in the timeline's spelling: a name another
// tool left mangled, demangled as the timeline demangles the names CUPTI
// leaves mangled; any other name as it is.
func DemangledName(name string) string {
	d, _ := demangled(name, name)
	return d
}

// call is a's Call (API.Call), the one value of its kind in the process.
func (bp *building) call(a *cupti.API) uint32 {
	c := Call{Kind: a.Kind, CBID: a.CBID, Function: a.Function}
	i := bp.calls[c]
	if i == 0 {
		bp.p.Calls = append(bp.p.Calls, c)
		i = uint32(len(bp.p.Calls))
		bp.calls[c] = i
	}
	return i
}

// keepAPIs keeps one launch call per correlation id, the earliest-starting
// (the runtime call, not the driver call it makes; the first in the file
// at a tie), sorted by start; it returns their index by correlation id.
func (bp *building) keepAPIs() *corrIndex {
	p, all := bp.p, bp.apis.all()
	for i := range all {
		all[i].Start, all[i].End = p.Cut(all[i].Start), p.Cut(all[i].End)
	}
	sortNearly(all, func(x, y API) int {
		if x.Correlation != y.Correlation {
			return cmp.Compare(x.Correlation, y.Correlation)
		}
		if x.Start != y.Start {
			return cmp.Compare(x.Start, y.Start)
		}
		return cmp.Compare(x.Line, y.Line)
	})
	kept := all[:0]
	for i, a := range all {
		if i > 0 && a.Correlation == kept[len(kept)-1].Correlation {
			p.SharedCorrelation++
			continue
		}
		kept = append(kept, a)
	}
	p.APIs = kept
	if cap(kept)-len(kept) > len(kept)/8 { // many driver calls under runtime calls
		p.APIs = slices.Clone(kept)
	}
	sortNearly(p.APIs, func(x, y API) int {
		if x.Start != y.Start {
			return cmp.Compare(x.Start, y.Start)
		}
		return cmp.Compare(x.Correlation, y.Correlation)
	})
	return newCorrIndex(p.APIs)
}

// checkCounts makes anomalies of the library's own account of its records:
// records it dropped (a note, or the end line), and an end line whose count
// is not the file's.
func (p *Process) checkCounts(records uint64) {
	var dropped uint64
	for _, n := range p.Notes {
		if n.Key == "dropped_records" {
			v, err := strconv.ParseUint(strings.TrimSpace(n.Value), 10, 64)
			if err != nil {
				p.anomaly(false, "", "%s:%d: dropped_records %q is not a count: the library's account of dropped records cannot be read", p.File, n.Line, n.Value)
				continue
			}
			dropped = max(dropped, v)
		}
	}
	if p.End != nil {
		dropped = max(dropped, p.End.Dropped)
		if p.End.Records != records {
			p.anomaly(false, "", "%s:%d: the end line counts %d records, the file holds %d: records were lost or added after the library wrote them",
				p.File, p.End.Line, p.End.Records, records)
		}
	}
	if dropped > 0 {
		p.anomaly(false, "", "%s: the CUPTI library dropped %d records (its buffers were full): kernels, calls or ranges are missing from the counts and times",
			p.File, dropped)
	}
}

// Build sorts and attributes every process's records.
func (b *Builder) Build() (*Timeline, error) {
	tl := &Timeline{Notes: b.notes}
	first := true
	procs := slices.Collect(maps.Values(b.procs))
	slices.SortFunc(procs, func(x, y *building) int {
		return cmp.Or(cmp.Compare(x.p.Header.PID, y.p.Header.PID), cmp.Compare(x.p.Header.Machine(), y.p.Header.Machine()))
	})
	tl.GPUs = numberDevices(procs)
	inParallel(len(procs), func(i int) { procs[i].build() })
	for _, bp := range procs {
		tl.Processes = append(tl.Processes, bp.p)
		if o, ok := bp.p.Origin(); ok && (first || o < tl.OriginNS) {
			tl.OriginNS, first = o, false
		}
	}
	b.procs, b.notes = map[processKey]*building{}, nil
	return tl, nil
}

// Origin is the process's earliest timestamp.
func (p *Process) Origin() (int64, bool) {
	o, ok := int64(0), false
	see := func(t int64) {
		if !ok || t < o {
			o, ok = t, true
		}
	}
	if len(p.Kernels) > 0 {
		see(p.Kernels[0].Start)
	}
	if len(p.Copies) > 0 {
		see(p.Copies[0].Start)
	}
	if len(p.APIs) > 0 {
		see(p.APIs[0].Start)
	}
	if len(p.Ranges) > 0 {
		see(p.Ranges[0].Start)
	}
	for _, m := range p.Marks {
		see(m.TS)
	}
	return o, ok
}

// dropUnclosed leaves the push/pop ranges that were never popped, in a
// process that ended normally, out of the process's ranges and stacks: the launches they held belong to the
// ranges around them. Such a range has no end, so it is no region, phase
// or stage; and left in, one pushed early by a library (NCCL pushes
// NCCL@ncclCommInitRankConfig at init and never pops it: the 2-GPU
// recording of fixtures/runs/tp2-*) would hold every later range of its
// thread, the program's prefill and decode included. Problems already say
// which ranges never closed.
func (bp *building) dropUnclosed(changes map[int64][]change) {
	p := bp.p
	closed := func(r *Range) *Range {
		for r != nil && !r.Closed {
			r = r.Parent
		}
		return r
	}
	dropped := false
	kept := p.Ranges[:0]
	for _, r := range p.Ranges {
		if r.Kind == PushPop && !r.Closed {
			dropped = true
			continue
		}
		kept = append(kept, r)
	}
	if !dropped {
		return
	}
	clear(p.Ranges[len(kept):])
	p.Ranges = kept
	// By start: a parent's depth is set before its children's.
	for _, r := range p.Ranges {
		if r.Kind != PushPop {
			continue
		}
		r.Parent = closed(r.Parent)
		r.SetDepth()
	}
	for _, cs := range changes {
		for i := range cs {
			cs[i].top = closed(cs[i].top)
		}
	}
	p.problem("%s: the push/pop ranges never closed are left out of the regions, phases and stages: the launches they held belong to the ranges around them", p.File)
}

// change is a thread's push/pop stack after an event: top is its innermost
// open range.
type change struct {
	ts  int64
	top *Range
}

func (bp *building) build() {
	p := bp.p
	p.Kernels = bp.kernels.all()
	bp.measure()
	p.dropImpossible()
	calls := bp.keepAPIs()
	bp.functions, bp.calls = nil, nil

	// NVTX events per thread, in time order (file order at a tie).
	nvtx := bp.nvtx.all()
	for i := range nvtx {
		nvtx[i].TS = p.Cut(nvtx[i].TS)
	}
	slices.SortStableFunc(nvtx, func(x, y cupti.NVTX) int {
		return cmp.Or(cmp.Compare(x.Thread, y.Thread), cmp.Compare(x.TS, y.TS), cmp.Compare(x.Line, y.Line))
	})
	changes := map[int64][]change{}
	open := map[int64]*Range{} // per thread, the innermost push/pop range
	started := map[uint64]*Range{}
	for _, e := range nvtx {
		switch e.Kind {
		case cupti.NVTXPush:
			r := &Range{Kind: PushPop, Domain: e.Domain, Name: e.Name, Thread: e.Thread, ID: e.ID, Start: e.TS, Line: e.Line,
				Parent: open[e.Thread]}
			r.SetDepth()
			open[e.Thread] = r
			p.Ranges = append(p.Ranges, r)
			changes[e.Thread] = append(changes[e.Thread], change{e.TS, r})
		case cupti.NVTXPop:
			r := open[e.Thread]
			if r == nil {
				p.anomaly(true, e.Domain, "%s:%d: a pop on thread %d with no range open: ignored", p.File, e.Line, e.Thread)
				continue
			}
			r.End, r.EndThread, r.Closed = e.TS, e.Thread, true
			open[e.Thread] = r.Parent
			changes[e.Thread] = append(changes[e.Thread], change{e.TS, r.Parent})
		case cupti.NVTXStart:
			if prev := started[e.ID]; prev != nil {
				p.anomaly(true, e.Domain, "%s:%d: start/end range id %d started again (first on line %d) before it ended", p.File, e.Line, e.ID, prev.Line)
			}
			r := &Range{Kind: StartEnd, Domain: e.Domain, Name: e.Name, Thread: e.Thread, ID: e.ID, Start: e.TS, Line: e.Line}
			started[e.ID] = r
			p.Ranges = append(p.Ranges, r)
		case cupti.NVTXEnd:
			r := started[e.ID]
			if r == nil {
				p.anomaly(true, e.Domain, "%s:%d: end of start/end range id %d, which never started: ignored", p.File, e.Line, e.ID)
				continue
			}
			r.End, r.EndThread, r.Closed = e.TS, e.Thread, true
			delete(started, e.ID)
		}
	}
	slices.SortStableFunc(p.Ranges, func(x, y *Range) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Depth, y.Depth))
	})
	for _, r := range p.Ranges {
		if !r.Closed {
			p.anomaly(true, r.Domain, "%s:%d: %s range %q on thread %d never closed", p.File, r.Line, r.Kind, r.Name, r.Thread)
		}
	}
	if p.Truncation == "" {
		// A file cut short (a crash, a kill) keeps its open ranges: they
		// were open when the process died, and still attribute.
		bp.dropUnclosed(changes)
	}

	// at is the launch call of correlation id corr (its index in p.APIs,
	// -1: none) and the range it was made in.
	at := func(corr uint32) (int32, *Range) {
		j := calls.find(corr)
		if j < 0 {
			return -1, nil
		}
		api := &p.APIs[j]
		cs := changes[api.Thread]
		i := sort.Search(len(cs), func(i int) bool { return cs[i].ts > api.Start })
		if i == 0 {
			return j, nil
		}
		return j, cs[i-1].top
	}
	for i := range p.Kernels {
		k := &p.Kernels[i]
		a, r := at(k.Correlation)
		k.API = uint32(a + 1)
		p.SetRange(k, r)
		if a < 0 {
			p.Unattributed++
		}
	}
	p.dropBeforeLaunch()
	if p.Unattributed > 0 {
		p.anomaly(false, "", "%s: %d of %d kernels have no launch call record (dropped, or the file was cut short): they belong to no range",
			p.File, p.Unattributed, len(p.Kernels))
	}
	for i := range p.Copies {
		c := &p.Copies[i]
		a, r := at(c.Correlation)
		if a >= 0 {
			c.API = &p.APIs[a]
		}
		c.Range = r
	}
	sortNearly(p.Kernels, compareKernels)
	p.dropDuplicates()
	for i := range p.Kernels {
		if a := p.APIOf(&p.Kernels[i]); a != nil {
			a.Kernels++
		}
	}
	slices.SortFunc(p.Copies, func(x, y Copy) int {
		return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Correlation, y.Correlation), cmp.Compare(x.Line, y.Line))
	})
	p.dropCopyDuplicates()
}

// compareKernels orders kernels by start, then correlation id, then line.
// Each key is compared only where the ones before it tie: the sort of a
// long run's kernels calls it some 40 times a kernel.
func compareKernels(x, y KernelExecution) int {
	if x.Start != y.Start {
		return cmp.Compare(x.Start, y.Start)
	}
	if x.Correlation != y.Correlation {
		return cmp.Compare(x.Correlation, y.Correlation)
	}
	return cmp.Compare(x.Line, y.Line)
}

// dropBeforeLaunch leaves out the kernels that start before their own
// launch call: an impossible time (a GPU clock read wrong, an edited
// file) that would stretch a phase's span back to it and make its launch
// latency negative.
func (p *Process) dropBeforeLaunch() {
	kept := p.Kernels[:0]
	first, n := 0, 0
	for _, k := range p.Kernels {
		if a := p.APIOf(&k); a != nil && k.Start < a.Start {
			if n == 0 {
				first = int(k.Line)
			}
			n++
			continue
		}
		kept = append(kept, k)
	}
	clear(p.Kernels[len(kept):])
	p.Kernels = kept
	if n > 0 {
		p.anomaly(false, "", "%s:%d: %d kernel records start before their own launch call (impossible times): left out", p.File, first, n)
	}
}

// dropCopyDuplicates counts once the copy records that repeat another
// (every field but the line the same): a copy recorded twice would count
// its time and bytes twice. Copies are sorted by start.
func (p *Process) dropCopyDuplicates() {
	var first, n int
	p.Copies, first, n = dropRepeats(p.Copies, func(c *Copy) int64 { return c.Start }, func(c *Copy) int { return c.Line },
		func(a, b *Copy) bool {
			a2, b2 := *a, *b
			a2.Line, b2.Line = 0, 0
			return a2 == b2
		})
	if n > 0 {
		p.anomaly(false, "", "%s:%d: %d copy records repeat another (the same correlation id, times, device, stream and bytes): counted once", p.File, first, n)
	}
}

// dropRepeats keeps the first of each run of records of xs (sorted by
// start) that same says are one, and returns them, the line of the first
// left out and how many were.
func dropRepeats[T any](xs []T, start func(*T) int64, line func(*T) int, same func(a, b *T) bool) (kept []T, first, n int) {
	if len(xs) < 2 {
		return xs, 0, 0
	}
	kept = xs[:1]
	for i := 1; i < len(xs); i++ {
		// x, not a copy of it: a copy would escape to the heap through
		// start and same, one allocation a record. Only xs[:i+1] is
		// written (kept is a prefix of xs no longer than i).
		x := &xs[i]
		dup := false
		for j := len(kept) - 1; j >= 0 && start(&kept[j]) == start(x); j-- {
			if same(&kept[j], x) {
				dup = true
				break
			}
		}
		if !dup {
			kept = append(kept, *x)
			continue
		}
		if n == 0 {
			first = line(x)
		}
		n++
	}
	clear(xs[len(kept):])
	return kept, first, n
}

func (p *Process) problem(format string, args ...any) {
	p.Problems = append(p.Problems, fmt.Sprintf(format, args...))
}

// anomaly is a problem that changes the numbers made from the file
// (Anomaly says which ranges it is about).
func (p *Process) anomaly(ranged bool, domain, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.Problems = append(p.Problems, msg)
	p.Anomalies = append(p.Anomalies, Anomaly{Msg: msg, Ranged: ranged, Domain: domain})
}

// dropImpossible leaves out the kernels whose times no kernel has: an end
// before the start, or longer than MaxKernelNS (a sum of such times
// passes what an int64 of nanoseconds holds).
func (p *Process) dropImpossible() {
	keptCopies := p.Copies[:0]
	firstCopy, nc := 0, 0
	for _, c := range p.Copies {
		if c.End < c.Start || c.Start < 0 || c.End-c.Start > MaxKernelNS {
			if nc == 0 {
				firstCopy = c.Line
			}
			nc++
			continue
		}
		keptCopies = append(keptCopies, c)
	}
	clear(p.Copies[len(keptCopies):])
	p.Copies = keptCopies
	if nc > 0 {
		p.anomaly(false, "", "%s:%d: %d copy records with impossible times (an end before the start, or longer than an hour): left out",
			p.File, firstCopy, nc)
	}
	kept := p.Kernels[:0]
	first, n := 0, 0
	for _, k := range p.Kernels {
		if k.End < k.Start || k.Start < 0 || k.End-k.Start > MaxKernelNS {
			if n == 0 {
				first = int(k.Line)
			}
			n++
			continue
		}
		kept = append(kept, k)
	}
	clear(p.Kernels[len(kept):])
	p.Kernels = kept
	if n > 0 {
		p.anomaly(false, "", "%s:%d: %d kernel records with impossible times (an end before the start, or longer than an hour): left out",
			p.File, first, n)
	}
}

// dropDuplicates counts once the kernel records that repeat another (the
// same correlation id, start, end, device, context and stream): one launch
// recorded twice would count twice. Kernels are sorted by start.
func (p *Process) dropDuplicates() {
	var first, n int
	p.Kernels, first, n = dropRepeats(p.Kernels, func(k *KernelExecution) int64 { return k.Start }, func(k *KernelExecution) int { return int(k.Line) },
		func(a, b *KernelExecution) bool {
			return a.Start == b.Start && a.End == b.End && a.Correlation == b.Correlation &&
				sameStream(p.Fn(a), p.Fn(b))
		})
	if n > 0 {
		p.anomaly(false, "", "%s:%d: %d kernel records repeat another (the same correlation id, start and end): each counted once",
			p.File, first, n)
	}
}

// sameStream says a and b ran on one device, context and stream.
func sameStream(a, b *Function) bool {
	return a.Device == b.Device && a.Context == b.Context && a.Stream == b.Stream
}

// OpenRecords is the text of a CUPTI record file read from r: r itself, or
// its gzip stream when it starts with gzip's magic bytes.
func OpenRecords(r io.Reader, name string) (io.Reader, error) {
	in, err := input.Maybe(bufio.NewReaderSize(r, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return in, nil
}
