package cupti

import (
	"fmt"
	"strconv"
)

// Magic is the first field of a deepprof-cupti/1 file's header line.
const Magic = "#deepprof-cupti/1"

// magicPrefix is what every version's header starts with.
const magicPrefix = "#deepprof-cupti/"

// Record is what Reader.Record returns: one of *Header, *Kernel, *Memcpy,
// *Memset, *API, *NVTX, *Metric, *Window, *Note, *End, or a *SyntaxError
// for a bad line.
type Record interface{ isRecord() }

func (*Header) isRecord()       {}
func (*KernelRecord) isRecord() {}
func (*Memcpy) isRecord()       {}
func (*Memset) isRecord()       {}
func (*API) isRecord()          {}
func (*NVTX) isRecord()         {}
func (*Metric) isRecord()       {}
func (*Window) isRecord()       {}
func (*Note) isRecord()         {}
func (*End) isRecord()          {}
func (*SyntaxError) isRecord()  {}

// Header is the file's first line: which process wrote it, with what.
type Header struct {
	Line       int
	PID, PPID  int64
	CUPTIAPI   int64 // cuptiGetVersion
	CUDADriver int64 // cuDriverGetVersion
	StartNS    int64 // CUPTI timestamp when recording began
	Exe        string
	// Extra holds further key=value fields, in input order.
	Extra []KeyValue
}

// KeyValue is one further key=value field of a header.
type KeyValue struct{ Key, Value string }

// Header keys the format names, in the order the Writer writes them.
const (
	keyPID        = "pid"
	keyPPID       = "ppid"
	keyCUPTIAPI   = "cupti_api"
	keyCUDADriver = "cuda_driver"
	keyStartNS    = "start_ns"
	keyExe        = "exe"
)

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// String writes the shape as ncu's Grid Size and Block Size columns do:
// "(256, 1, 1)".
func (d Dim3) String() string {
	return "(" + strconv.FormatUint(uint64(d.X), 10) + ", " + strconv.FormatUint(uint64(d.Y), 10) + ", " +
		strconv.FormatUint(uint64(d.Z), 10) + ")"
}

// KernelRecord is one kernel execution (CUPTI's CONCURRENT_KERNEL activity).
type KernelRecord struct {
	Line                        int
	Start, End                  int64 // ns; End >= Start
	Device, Context, Stream     uint32
	Correlation                 uint32 // joins the API record that launched it
	Grid, Block                 Dim3
	Registers                   uint32 // per thread
	StaticShared, DynamicShared uint32 // bytes
	Mangled, Demangled          string
}

// Name is the kernel's name as deepprof reports it: the demangled name, or
// the mangled one when CUPTI gave no demangled form.
func (k *KernelRecord) Name() string {
	if k.Demangled != "" {
		return k.Demangled
	}
	return k.Mangled
}

// CopyKind is a memcpy's direction.
type CopyKind string

// The copy kinds the format knows.
const (
	CopyHtoD  CopyKind = "HtoD"
	CopyDtoH  CopyKind = "DtoH"
	CopyDtoD  CopyKind = "DtoD"
	CopyHtoH  CopyKind = "HtoH"
	CopyPtoP  CopyKind = "PtoP"
	CopyOther CopyKind = "other"
)

func validCopyKind(s string) bool {
	switch CopyKind(s) {
	case CopyHtoD, CopyDtoH, CopyDtoD, CopyHtoH, CopyPtoP, CopyOther:
		return true
	}
	return false
}

// Memcpy is one memory copy.
type Memcpy struct {
	Line                    int
	Start, End              int64
	Device, Context, Stream uint32
	Correlation             uint32
	Kind                    CopyKind
	Bytes                   uint64
}

// Memset is one memory set.
type Memset struct {
	Line                    int
	Start, End              int64
	Device, Context, Stream uint32
	Correlation             uint32
	Bytes                   uint64
}

// APIKind says which CUDA API a call belongs to.
type APIKind string

// The API kinds.
const (
	APIRuntime APIKind = "runtime"
	APIDriver  APIKind = "driver"
)

// API is the runtime or driver call that launched a kernel or started a
// memcpy or memset.
type API struct {
	Line        int
	Start, End  int64 // CPU times, ns
	Thread      int64 // OS thread id, as in NVTX records
	Correlation uint32
	Kind        APIKind
	CBID        uint32 // CUPTI callback id
	Function    string
}

// NVTXKind is what an NVTX event does.
type NVTXKind string

// The NVTX event kinds.
const (
	NVTXPush  NVTXKind = "push"
	NVTXPop   NVTXKind = "pop"
	NVTXStart NVTXKind = "start"
	NVTXEnd   NVTXKind = "end"
	NVTXMark  NVTXKind = "mark"
)

func validNVTXKind(s string) bool {
	switch NVTXKind(s) {
	case NVTXPush, NVTXPop, NVTXStart, NVTXEnd, NVTXMark:
		return true
	}
	return false
}

// NVTX is one NVTX event on one thread.
type NVTX struct {
	Line   int
	Kind   NVTXKind
	TS     int64
	Thread int64
	// ID pairs a start with its end (and a push with its pop where CUPTI
	// gives one).
	ID     uint64
	Domain string // "" for NVTX's default domain
	Name   string // may be empty on pop and end
}

// Metric is one metric of one launch, measured in the recorded process by
// the library's range profiler (CUPTI's kernel replay of that launch).
type Metric struct {
	Line        int
	Correlation uint32 // the launch's, as its KernelRecord has it
	Name        string // the metric, as ncu and CUPTI name it
	Value       float64
}

// Window is the host time the library spent measuring one launch (Metric):
// the program was stopped in that launch call from Start to End, a time a
// reader cuts out of the timeline.
type Window struct {
	Line        int
	Correlation uint32
	Start, End  int64 // ns, CUPTI's clock; End >= Start
}

// Note is a remark of the library, such as "dropped_records 12".
type Note struct {
	Line       int
	Key, Value string
}

// End is the last line of a file whose process exited normally.
type End struct {
	Line    int
	Records uint64
	Dropped uint64
}

// SyntaxError is a positioned problem with the input. It prints as
// "file:line: msg".
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }
