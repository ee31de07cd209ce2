// The CUPTI timeline as Chrome trace event JSON (see the package
// documentation, "Trace").

package render

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"path"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/pgzip"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// Category names of the events: PyTorch's profiler (Kineto) writes these,
// and Holistic Trace Analysis reads them (docs/run-directory.md).
const (
	CatKernel  = "kernel"
	CatMemcpy  = "gpu_memcpy"
	CatMemset  = "gpu_memset"
	CatRuntime = "cuda_runtime" // a CUDA runtime API call
	CatDriver  = "cuda_driver"  // a CUDA driver API call
	CatNVTX    = "user_annotation"
	// CatLaunch is the flow from a launch call to its kernel: Perfetto and
	// chrome://tracing draw it as an arrow.
	CatLaunch = "ac2g"
)

// gpuPIDBase is where the trace's synthetic process ids of GPU track groups
// start: above Linux's largest pid (2^22), so they meet no real process.
const gpuPIDBase = 1 << 22

// maxQuoted bounds the cache of quoted names.
const maxQuoted = 1 << 16

// TraceGzipLevel is the trace's compression level: the fastest. A
// rebuild's time matters more than the trace's size: a file some 3 to
// 19 % larger than level 3's (BenchmarkTraceGzipLevel,
// docs/measurements.md).
const TraceGzipLevel = 1

// The trace is compressed in blocks of traceBlock bytes, each on a core of
// its own (pgzip), at most traceBlocks in flight: memory stays bounded
// however many cores the machine has.
const (
	traceBlock  = 1 << 20
	traceBlocks = 8
)

// TraceGzip writes the trace to w, gzip-compressed (TraceGzipLevel) in
// blocks on several cores, as it is made: memory does not grow with the
// trace. The first error of w ends the trace at its next write, and is
// the error returned.
func TraceGzip(w io.Writer, tl *timeline.Timeline) error {
	return traceGzip(w, tl, TraceGzipLevel)
}

// traceGzip is TraceGzip at gzip level level.
func traceGzip(w io.Writer, tl *timeline.Timeline, level int) error {
	out := &firstError{w: w}
	zw, err := pgzip.NewWriterLevel(out, level)
	if err != nil {
		return err
	}
	if err := zw.SetConcurrency(traceBlock, min(runtime.GOMAXPROCS(0), traceBlocks)); err != nil {
		return err
	}
	werr := Write(stopOnError{zw, out}, tl)
	// Closed all the same, and to its end: out never fails pgzip, whose
	// Close otherwise leaves a compressing goroutine waiting.
	cerr := zw.Close()
	if err := out.failed(); err != nil {
		return err
	}
	return errors.Join(werr, cerr)
}

// firstError writes to w until w fails; after that it keeps the error and
// takes every write without writing it.
type firstError struct {
	w   io.Writer
	mu  sync.Mutex
	err error
}

func (f *firstError) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		_, f.err = f.w.Write(p)
	}
	return len(p), nil
}

func (f *firstError) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// stopOnError writes to w until out has failed.
type stopOnError struct {
	w   io.Writer
	out *firstError
}

func (s stopOnError) Write(p []byte) (int, error) {
	if err := s.out.failed(); err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

type writer struct {
	w        *bufio.Writer
	argFirst bool // the next key is the first of an args object
	origin   int64
	first    bool
	b        []byte
	quoted   map[string][]byte
	// fns are the bytes a kernel's events repeat for its function, made
	// once (at most maxQuoted of them); lastRange and lastPath the quoted
	// path of the range the last kernel ran in.
	fns       map[*timeline.Function]*fnBytes
	lastRange *timeline.Range
	lastPath  []byte
	copyNames map[cupti.CopyKind]string
}

// fnBytes are a function's quoted name and the arguments every one of its
// kernels gives alike, from "grid" to "mangled_name", as writer writes
// them.
type fnBytes struct{ name, fixed []byte }

// Write writes the trace to w.
func Write(w io.Writer, tl *timeline.Timeline) error {
	tw := &writer{w: bufio.NewWriterSize(w, 64<<10), origin: tl.OriginNS, first: true, quoted: map[string][]byte{},
		fns: map[*timeline.Function]*fnBytes{}, copyNames: map[cupti.CopyKind]string{}}
	tw.raw(`{"traceEvents":[`)
	for i, p := range tl.Processes {
		tw.process(p, i)
	}
	// distributedInfo: Holistic Trace Analysis reads a trace only with a
	// rank; the whole run is one trace, its rank 0.
	tw.raw("\n],\"displayTimeUnit\":\"ns\",\"distributedInfo\":{\"rank\":0},\"otherData\":{\"origin_ns\":\"")
	tw.raw(strconv.FormatInt(tl.OriginNS, 10))
	tw.raw("\",\"source\":\"deepprof CUPTI timeline\"}}\n")
	return tw.w.Flush()
}

func (w *writer) raw(s string) { w.w.WriteString(s) }

// event starts one event: {"ph":PH,"pid":PID,"tid":TID,"ts":TS
func (w *writer) event(ph string, pid, tid int64, ts int64) {
	b := w.b[:0]
	if w.first {
		b = append(b, "\n{\"ph\":\""...)
		w.first = false
	} else {
		b = append(b, ",\n{\"ph\":\""...)
	}
	b = append(b, ph...)
	b = append(b, "\",\"pid\":"...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, ",\"tid\":"...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, ",\"ts\":"...)
	b = w.us(b, ts-w.origin)
	w.b = b
	w.argFirst = false
}

// us appends ns as microseconds with three decimals, exactly.
func (w *writer) us(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	f := ns % 1000
	return append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
}

func (w *writer) key(k string) {
	if w.argFirst {
		w.argFirst = false
		w.b = append(w.b, '"')
	} else {
		w.b = append(w.b, ",\""...)
	}
	w.b = append(w.b, k...)
	w.b = append(w.b, "\":"...)
}

func (w *writer) str(k, v string) {
	w.key(k)
	w.b = append(w.b, w.quotedOf(v)...)
}

// quotedOf is v quoted (quote), made the first time (kept for at most
// maxQuoted strings).
func (w *writer) quotedOf(v string) []byte {
	q, ok := w.quoted[v]
	if !ok {
		q = quote(v)
		if len(w.quoted) < maxQuoted {
			w.quoted[v] = q
		}
	}
	return q
}

func (w *writer) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *writer) dur(ns int64) {
	w.key("dur")
	w.b = w.us(w.b, ns)
}

func (w *writer) args() {
	w.b = append(w.b, ",\"args\":{"...)
	w.argFirst = true
}

func (w *writer) end(closeArgs bool) {
	if closeArgs {
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, '}')
	w.w.Write(w.b)
}

// meta writes a metadata event (name: process_name, thread_name, ...).
func (w *writer) meta(name string, pid, tid int64, key string, v any) {
	w.event("M", pid, tid, w.origin)
	w.str("name", name)
	w.b = append(w.b, ",\"args\":{"...)
	w.b = append(w.b, '"')
	w.b = append(w.b, key...)
	w.b = append(w.b, "\":"...)
	switch v := v.(type) {
	case string:
		w.b = append(w.b, quote(v)...)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	}
	w.end(true)
}

// process writes one process of the timeline: its name and sort place,
// its threads, its ranges, marks and API calls, then its GPU tracks and the
// kernels and copies on them.
func (w *writer) process(p *timeline.Process, index int) {
	pid := p.Header.PID
	exe := path.Base(p.Header.Exe)
	w.meta("process_name", pid, 0, "name", exe+" (pid "+strconv.FormatInt(pid, 10)+")")
	w.meta("process_sort_index", pid, 0, "sort_index", int64(2*index))
	w.threads(p, pid)
	w.ranges(p, pid)
	w.marks(p, pid)
	w.apis(p, pid)
	gpid := w.gpuTracks(p, pid, index)
	w.kernels(p, pid, gpid)
	w.copies(p, pid, gpid)
}

// threads names every thread of process pid that launched work, pushed a
// range or made a mark, in thread id order.
func (w *writer) threads(p *timeline.Process, pid int64) {
	threads := map[int64]bool{}
	for _, a := range p.APIs {
		threads[a.Thread] = true
	}
	for _, r := range p.Ranges {
		threads[r.Thread] = true
	}
	for _, m := range p.Marks {
		threads[m.Thread] = true
	}
	tids := make([]int64, 0, len(threads))
	for t := range threads {
		tids = append(tids, t)
	}
	slices.Sort(tids)
	for _, t := range tids {
		w.meta("thread_name", pid, t, "name", "thread "+strconv.FormatInt(t, 10))
	}
}

// ranges writes the process's NVTX ranges: a push/pop range as one
// complete event, a start/end range as a begin and an end event (the end on
// the thread that ended it); a range never closed ends at the process's
// last timestamp and says so.
func (w *writer) ranges(p *timeline.Process, pid int64) {
	last := lastTS(p)
	for _, r := range p.Ranges {
		end, closed := r.End, r.Closed
		if !closed {
			end = max(last, r.Start)
		}
		if r.Kind == timeline.PushPop {
			w.event("X", pid, r.Thread, r.Start)
			w.str("cat", CatNVTX)
			w.str("name", r.Label())
			w.dur(end - r.Start)
			w.args()
			w.str("path", r.Path())
			w.str("domain", r.Domain)
			if !closed {
				w.str("unclosed", "the file ended with this range open")
			}
			w.end(true)
			continue
		}
		for _, ph := range []string{"b", "e"} {
			tid, ts := r.Thread, r.Start
			if ph == "e" {
				ts = end
				if closed {
					tid = r.EndThread
				}
			}
			w.event(ph, pid, tid, ts)
			w.str("cat", CatNVTX)
			w.str("name", r.Label())
			w.int("id", int64(r.ID))
			if ph == "b" {
				w.args()
				w.str("domain", r.Domain)
				if !closed {
					w.str("unclosed", "the file ended with this range open")
				}
				w.end(true)
			} else {
				w.end(false)
			}
		}
	}
}

// marks writes the process's NVTX marks as thread-scoped instant events.
func (w *writer) marks(p *timeline.Process, pid int64) {
	for _, m := range p.Marks {
		w.event("i", pid, m.Thread, m.TS)
		w.str("cat", CatNVTX)
		w.str("name", timelineLabel(m))
		w.str("s", "t")
		w.end(false)
	}
}

// apis writes the process's CUDA runtime and driver calls as complete
// events on their threads. A call's fixed fields are made once
// (callFields).
func (w *writer) apis(p *timeline.Process, pid int64) {
	calls := make([]*callBytes, len(p.Calls)+1)
	for i := range p.APIs {
		a := &p.APIs[i]
		cb := calls[0]
		if f := p.CallOf(a); f != nil {
			cb = calls[a.Call]
			if cb == nil {
				cb = w.callFields(*f)
				calls[a.Call] = cb
			}
		} else if cb == nil {
			cb = w.callFields(timeline.Call{})
			calls[0] = cb
		}
		w.event("X", pid, a.Thread, a.Start)
		w.b = append(w.b, cb.head...)
		w.dur(a.End - a.Start)
		w.args()
		w.int("correlation", int64(a.Correlation))
		w.b = append(w.b, cb.tail...)
		w.end(true)
	}
}

// callBytes are a launch call's fields as apis writes them around its
// own: its category and name after the event's start, its API and
// callback id after its correlation id.
type callBytes struct{ head, tail []byte }

// callFields is c's callBytes.
func (w *writer) callFields(c timeline.Call) *callBytes {
	b, first := w.b, w.argFirst
	cat := CatRuntime
	if c.Kind == cupti.APIDriver {
		cat = CatDriver
	}
	w.b, w.argFirst = nil, false
	w.str("cat", cat)
	w.str("name", c.Function)
	head := w.b
	w.b = nil
	w.str("api", string(c.Kind))
	w.int("cbid", int64(c.CBID))
	cb := &callBytes{head: head, tail: w.b}
	w.b, w.argFirst = b, first
	return cb
}

// gpuTracks names one track group per device the process's kernels and
// copies ran on (in device order, after the process), with one track per
// stream, and returns each device's track group pid.
func (w *writer) gpuTracks(p *timeline.Process, pid int64, index int) map[uint32]int64 {
	type dev struct{ streams map[uint32]bool }
	devs := map[uint32]*dev{}
	see := func(d, s uint32) {
		if devs[d] == nil {
			devs[d] = &dev{streams: map[uint32]bool{}}
		}
		devs[d].streams[s] = true
	}
	for i := range p.Kernels {
		f := p.Fn(&p.Kernels[i])
		see(f.Device, f.Stream)
	}
	for i := range p.Copies {
		see(p.Copies[i].Device, p.Copies[i].Stream)
	}
	ids := make([]uint32, 0, len(devs))
	for d := range devs {
		ids = append(ids, d)
	}
	slices.Sort(ids)
	gpid := map[uint32]int64{}
	for j, d := range ids {
		g := int64(gpuPIDBase + index*256 + j)
		gpid[d] = g
		w.meta("process_name", g, 0, "name", "GPU "+strconv.FormatUint(uint64(d), 10)+" (pid "+strconv.FormatInt(pid, 10)+")")
		w.meta("process_sort_index", g, 0, "sort_index", int64(2*index+1))
		ss := make([]uint32, 0, len(devs[d].streams))
		for s := range devs[d].streams {
			ss = append(ss, s)
		}
		slices.Sort(ss)
		for _, s := range ss {
			w.meta("thread_name", g, int64(s), "name", "stream "+strconv.FormatUint(uint64(s), 10))
		}
	}
	return gpid
}

// kernels writes the process's kernels on their stream's track, each with
// its launch figures and a flow arrow from the call that launched it.
func (w *writer) kernels(p *timeline.Process, pid int64, gpid map[uint32]int64) {
	for i := range p.Kernels {
		k := &p.Kernels[i]
		f, api, r := p.Fn(k), p.APIOf(k), p.RangeOf(k)
		fb := w.function(f)
		w.event("X", gpid[f.Device], int64(f.Stream), k.Start)
		w.b = append(w.b, kernelCat...)
		w.key("name")
		w.b = append(w.b, fb.name...)
		w.dur(k.End - k.Start)
		w.args()
		w.int("pid", pid)
		w.int("device", int64(f.Device))
		w.int("stream", int64(f.Stream))
		w.int("correlation", int64(k.Correlation))
		w.b = append(w.b, fb.fixed...)
		if r != nil {
			w.nvtx(r)
		}
		if api != nil {
			w.dur2("launch_latency_us", k.Start-api.Start)
		}
		w.end(true)
		if api != nil {
			w.flow(pid, api.Thread, api.Start, gpid[f.Device], int64(f.Stream), k.Start, i)
		}
	}
}

// nvtx writes the "nvtx" argument of an event in r: its range's path,
// quoted once for the events in a row of one range.
func (w *writer) nvtx(r *timeline.Range) {
	if r != w.lastRange {
		w.lastRange, w.lastPath = r, w.quotedOf(r.Path())
	}
	w.key("nvtx")
	w.b = append(w.b, w.lastPath...)
}

// kernelCat is a kernel event's category field, as writer.str writes it
// after the event's start.
var kernelCat = `,"cat":` + string(quote(CatKernel))

// function is f's fnBytes, made the first time (kept for at most maxQuoted
// functions).
func (w *writer) function(f *timeline.Function) *fnBytes {
	if fb := w.fns[f]; fb != nil {
		return fb
	}
	b, first := w.b, w.argFirst
	w.b, w.argFirst = nil, false
	w.dims("grid", f.Grid)
	w.dims("block", f.Block)
	w.int("registers per thread", int64(f.Registers))
	w.int("shared memory", int64(f.StaticShared)+int64(f.DynamicShared))
	w.int("static_shared_bytes", int64(f.StaticShared))
	w.int("dynamic_shared_bytes", int64(f.DynamicShared))
	w.str("mangled_name", f.Mangled)
	fb := &fnBytes{name: quote(f.Name()), fixed: w.b}
	w.b, w.argFirst = b, first
	if len(w.fns) < maxQuoted {
		w.fns[f] = fb
	}
	return fb
}

// quote is s as a JSON string; invalid UTF-8 becomes U+FFFD.
func quote(s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return q
}

// copies writes the process's memcpys and memsets on their stream's track.
func (w *writer) copies(p *timeline.Process, pid int64, gpid map[uint32]int64) {
	for i := range p.Copies {
		c := &p.Copies[i]
		cat, name := CatMemset, "Memset"
		if c.Kind != "" {
			cat, name = CatMemcpy, w.copyName(c.Kind)
		}
		w.event("X", gpid[c.Device], int64(c.Stream), c.Start)
		w.str("cat", cat)
		w.str("name", name)
		w.dur(c.End - c.Start)
		w.args()
		w.int("pid", pid)
		w.int("device", int64(c.Device))
		w.int("stream", int64(c.Stream))
		w.int("bytes", int64(min(c.Bytes, 1<<62)))
		w.int("correlation", int64(c.Correlation))
		if c.Range != nil {
			w.nvtx(c.Range)
		}
		w.end(true)
	}
}

// copyName is the name of a memcpy of kind k: "Memcpy HtoD", made once a
// kind.
func (w *writer) copyName(k cupti.CopyKind) string {
	n, ok := w.copyNames[k]
	if !ok {
		n = "Memcpy " + string(k)
		w.copyNames[k] = n
	}
	return n
}

// flow writes the arrow from a launch call (on thread tid of process pid,
// starting at from) to its kernel (on track gtid of GPU track group gpid,
// starting at to): a flow start ("s") inside the call's slice and a flow
// end ("f", bound to the enclosing slice) at the kernel's start. Its id is
// the process's and the kernel's index in it, unique in the trace (one call
// may launch several kernels, all of one correlation id).
func (w *writer) flow(pid, tid, from, gpid, gtid, to int64, kernel int) {
	id := pid<<32 | int64(kernel)
	w.event("s", pid, tid, from)
	w.b = append(w.b, flowFields...)
	w.b = strconv.AppendInt(w.b, id, 10)
	w.end(false)
	w.event("f", gpid, gtid, to)
	w.b = append(w.b, flowFields...)
	w.b = strconv.AppendInt(w.b, id, 10)
	w.b = append(w.b, flowEnd...)
	w.end(false)
}

// flowFields are a launch flow event's category and name and its id's key,
// as writer.str and writer.int write them after the event's start;
// flowEnd is the binding point of the flow's end event.
var (
	flowFields = `,"cat":` + string(quote(CatLaunch)) + `,"name":` + string(quote("launch")) + `,"id":`
	flowEnd    = `,"bp":` + string(quote("e"))
)

// dims writes a launch's grid or block as Kineto does: [x, y, z].
func (w *writer) dims(k string, d cupti.Dim3) {
	w.key(k)
	w.b = append(w.b, '[')
	w.b = strconv.AppendUint(w.b, uint64(d.X), 10)
	w.b = append(w.b, ',')
	w.b = strconv.AppendUint(w.b, uint64(d.Y), 10)
	w.b = append(w.b, ',')
	w.b = strconv.AppendUint(w.b, uint64(d.Z), 10)
	w.b = append(w.b, ']')
}

// dur2 writes a duration in microseconds under another key.
func (w *writer) dur2(k string, ns int64) {
	w.key(k)
	w.b = w.us(w.b, ns)
}

// timelineLabel names a mark as ranges are named: Domain@name.
func timelineLabel(m cupti.NVTX) string {
	r := timeline.Range{Domain: m.Domain, Name: m.Name}
	return r.Label()
}

// lastTS is the latest timestamp of a process's records.
func lastTS(p *timeline.Process) int64 {
	var t int64
	for i := range p.Kernels {
		t = max(t, p.Kernels[i].End)
	}
	for i := range p.Copies {
		t = max(t, p.Copies[i].End)
	}
	for _, a := range p.APIs {
		t = max(t, a.End)
	}
	for _, r := range p.Ranges {
		t = max(t, r.Start, r.End)
	}
	for _, m := range p.Marks {
		t = max(t, m.TS)
	}
	return t
}
