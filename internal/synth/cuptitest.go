// SYNTHETIC CUPTI recordings (see the package documentation, "CUPTI
// recordings").

package synth

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/cupti"
)

// Config says what to write.
type Config struct {
	PID, PPID      int64
	Exe            string
	Device         uint32
	StartNS        int64 // the header's start_ns; timestamps follow it
	Seed           uint64
	PrefillKernels int // kernels in "prefill"
	DecodeSteps    int // "decode_step" ranges in "decode_all"
	StepKernels    int // kernels per decode step
	// SideThread adds the second thread (a range in domain LLM with one
	// kernel on stream 13, the end of the start/end range "generate").
	SideThread bool
	// Truncate leaves out the E line and ends in the middle of a line, as
	// a killed process's file does.
	Truncate bool
	// Nest pushes that many ranges (n1, n2, ...) inside the first decode
	// step, one inside the other, a kernel launched at each level: a
	// deeply nested program.
	Nest int
	// NumberSteps names each decode step's range apart, "decode_step 0",
	// "decode_step 1", ...: a program that opens a range per iteration.
	NumberSteps bool
}

// Small is the configuration of the small committed recordings.
func Small(pid int64) Config {
	return Config{PID: pid, PPID: 1, Exe: "/usr/bin/python3.12", StartNS: 1_760_000_000_000_000_000, Seed: uint64(pid),
		PrefillKernels: 6, DecodeSteps: 3, StepKernels: 4, SideThread: true}
}

// Kernels is the number of kernel records a configuration writes.
func (c Config) Kernels() int {
	n := c.PrefillKernels + c.DecodeSteps*c.StepKernels + c.Nest
	if c.SideThread {
		n++
	}
	return n
}

// Kernel names: demangled, mangled. One is a template with '<', '&' and ','
// for the escaping of names in Markdown and HTML.
var names = [][2]string{
	{"void gemv_kernel<float, 128>(float const*, float const*, float*, int)", "_Z11gemv_kernelIfLi128EEvPKfS1_Pfi"},
	{"rmsnorm_kernel(float*, float const*, int)", "_Z14rmsnorm_kernelPfPKfi"},
	{"void at::native::elementwise_kernel<128, 4>(int, at::native::Loop<float&>)", "_ZN2at6native18elementwise_kernelILi128ELi4EEEviNS0_4LoopIRfEE"},
	{"flash_fwd_kernel(Params)", "_Z16flash_fwd_kernel6Params"},
}

const (
	launchCPU  = 6_000 // ns of CPU per launch call
	apiNS      = 4_000 // ns the launch call itself takes
	latencyMin = 5_000 // ns from the call's start to the earliest kernel start
	mainStream = 7
	sideStream = 13
	chunk      = 16 // GPU records per delivered buffer
)

type gen struct {
	c       Config
	w       *cupti.Writer
	rng     *rand.Rand
	t       int64 // main thread's CPU clock
	gpuFree int64 // when the main stream is free
	corr    uint32
	nrec    uint64
	pending []cupti.Record
	kname   int
}

// Write writes one recording to w.
func Write(w io.Writer, c Config) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var tail truncWriter
	var out io.Writer = bw
	if c.Truncate {
		tail.w = bw
		out = &tail
	}
	g := &gen{c: c, w: cupti.NewWriter(out), rng: rand.New(rand.NewPCG(c.Seed, 0x9e3779b97f4a7c15))}
	if err := g.run(); err != nil {
		return err
	}
	if err := g.w.Flush(); err != nil {
		return err
	}
	if c.Truncate {
		// The last line, cut in the middle.
		if _, err := bw.Write(tail.last[:len(tail.last)/2]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// truncWriter holds back the last line written through it.
type truncWriter struct {
	w    io.Writer
	last []byte
}

func (t *truncWriter) Write(p []byte) (int, error) {
	data := append(t.last, p...)
	// The last line starts after the last '\n' that is not data's final byte.
	start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if _, err := t.w.Write(data[:start]); err != nil {
		return 0, err
	}
	t.last = append([]byte(nil), data[start:]...)
	return len(p), nil
}

func (g *gen) emit(r cupti.Record) error {
	if _, ok := r.(*cupti.Header); !ok {
		g.nrec++
	}
	return g.w.Write(r)
}

// gpu queues a GPU record; a full buffer is written reversed.
func (g *gen) gpu(r cupti.Record) error {
	g.pending = append(g.pending, r)
	if len(g.pending) >= chunk {
		return g.flushGPU()
	}
	return nil
}

func (g *gen) flushGPU() error {
	slices.Reverse(g.pending)
	for _, r := range g.pending {
		if err := g.emit(r); err != nil {
			return err
		}
	}
	g.pending = g.pending[:0]
	return nil
}

func (g *gen) nvtx(kind cupti.NVTXKind, ts, tid int64, id uint64, domain, name string) error {
	return g.emit(&cupti.NVTX{Kind: kind, TS: ts, Thread: tid, ID: id, Domain: domain, Name: name})
}

// launch makes one launch call on thread tid at CPU time t and its kernel.
func (g *gen) launch(tid, t int64, stream uint32, free *int64, durNS int64) error {
	g.corr++
	api := &cupti.API{Start: t, End: t + apiNS, Thread: tid, Correlation: g.corr, Kind: cupti.APIRuntime, CBID: 211, Function: "cudaLaunchKernel"}
	if err := g.emit(api); err != nil {
		return err
	}
	start := max(t+latencyMin+g.rng.Int64N(2_000), *free+500+g.rng.Int64N(1_000))
	end := start + durNS
	*free = end
	n := names[g.kname%len(names)]
	g.kname++
	k := &cupti.KernelRecord{Start: start, End: end, Device: g.c.Device, Context: 1, Stream: stream, Correlation: g.corr,
		Grid: cupti.Dim3{X: 128, Y: 1, Z: 1}, Block: cupti.Dim3{X: 256, Y: 1, Z: 1}, Registers: 32,
		StaticShared: 1024, DynamicShared: 0, Mangled: n[1], Demangled: n[0]}
	return g.gpu(k)
}

// copy makes a synchronous copy on the main thread.
func (g *gen) copy(kind cupti.CopyKind, bytes uint64, durNS int64) error {
	g.corr++
	t := g.t
	start := max(t+latencyMin, g.gpuFree+500)
	end := start + durNS
	g.gpuFree = end
	g.t = end + 1_000
	if err := g.emit(&cupti.API{Start: t, End: g.t, Thread: g.c.PID, Correlation: g.corr, Kind: cupti.APIRuntime, CBID: 51, Function: "cudaMemcpy"}); err != nil {
		return err
	}
	return g.gpu(&cupti.Memcpy{Start: start, End: end, Device: g.c.Device, Context: 1, Stream: mainStream, Correlation: g.corr, Kind: kind, Bytes: bytes})
}

func (g *gen) run() error {
	c := g.c
	main := c.PID
	side := c.PID + 1
	if err := g.emit(&cupti.Header{PID: c.PID, PPID: c.PPID, CUPTIAPI: 130000, CUDADriver: 13000, StartNS: c.StartNS, Exe: c.Exe,
		Extra: []cupti.KeyValue{{Key: "synthetic", Value: "cuptitest"}}}); err != nil {
		return err
	}
	if err := g.emit(&cupti.Note{Key: "synthetic", Value: "written by harness/cupti/cuptitest, not by CUPTI"}); err != nil {
		return err
	}
	g.t = c.StartNS + 1_000_000
	g.gpuFree = g.t
	if err := g.nvtx(cupti.NVTXStart, g.t, main, 1, "", "generate"); err != nil {
		return err
	}
	if err := g.copy(cupti.CopyHtoD, 64<<20, 20_000); err != nil {
		return err
	}

	// The side thread: a range in domain LLM, one kernel on its own stream,
	// while prefill runs. Its records come first in the file, though later
	// in time than the main thread's start.
	if c.SideThread {
		ts := g.t + 30_000
		if err := g.nvtx(cupti.NVTXPush, ts, side, 0, "LLM", "load:weights\\shard\t0"); err != nil {
			return err
		}
		free := ts
		if err := g.launch(side, ts+1_000, sideStream, &free, 40_000); err != nil {
			return err
		}
		if err := g.nvtx(cupti.NVTXPop, ts+9_000, side, 0, "LLM", ""); err != nil {
			return err
		}
	}

	// prefill: long kernels; the GPU queue grows.
	if err := g.nvtx(cupti.NVTXPush, g.t, main, 0, "", "prefill"); err != nil {
		return err
	}
	g.t += 2_000
	if err := g.emit(&cupti.API{Start: g.t, End: g.t + 3_000, Thread: main, Correlation: g.corr + 1, Kind: cupti.APIDriver, CBID: 1, Function: "cuMemsetD8Async"}); err != nil {
		return err
	}
	g.corr++
	if err := g.gpu(&cupti.Memset{Start: max(g.t+latencyMin, g.gpuFree+500), End: max(g.t+latencyMin, g.gpuFree+500) + 1_500,
		Device: c.Device, Context: 1, Stream: mainStream, Correlation: g.corr, Bytes: 4096}); err != nil {
		return err
	}
	g.gpuFree = max(g.t+latencyMin, g.gpuFree+500) + 1_500
	g.t += launchCPU
	for range c.PrefillKernels {
		if err := g.launch(main, g.t, mainStream, &g.gpuFree, 30_000+g.rng.Int64N(20_000)); err != nil {
			return err
		}
		g.t += launchCPU
	}
	// The first token: a synchronizing copy, as sampling does.
	if err := g.copy(cupti.CopyDtoH, 4, 1_500); err != nil {
		return err
	}
	if err := g.nvtx(cupti.NVTXPop, g.t, main, 0, "", ""); err != nil {
		return err
	}

	// decode: short kernels, a synchronizing copy per step.
	g.t += 10_000
	if err := g.nvtx(cupti.NVTXPush, g.t, main, 0, "", "decode_all"); err != nil {
		return err
	}
	for step := range c.DecodeSteps {
		g.t += 3_000
		name := "decode_step"
		if c.NumberSteps {
			name += " " + strconv.Itoa(step)
		}
		if err := g.nvtx(cupti.NVTXPush, g.t, main, 0, "", name); err != nil {
			return err
		}
		g.t += 1_000
		for range c.StepKernels {
			if err := g.launch(main, g.t, mainStream, &g.gpuFree, 2_000+g.rng.Int64N(2_000)); err != nil {
				return err
			}
			g.t += launchCPU + g.rng.Int64N(4_000)
		}
		for i := range c.Nest {
			if err := g.nvtx(cupti.NVTXPush, g.t, main, 0, "", "n"+strconv.Itoa(i+1)); err != nil {
				return err
			}
			g.t += 1_000
			if err := g.launch(main, g.t, mainStream, &g.gpuFree, 2_000); err != nil {
				return err
			}
			g.t += launchCPU
		}
		for range c.Nest {
			g.t += 1_000
			if err := g.nvtx(cupti.NVTXPop, g.t, main, 0, "", ""); err != nil {
				return err
			}
		}
		c.Nest = 0 // the first step only
		if err := g.copy(cupti.CopyDtoH, 4, 1_500); err != nil {
			return err
		}
		if err := g.nvtx(cupti.NVTXMark, g.t, main, 0, "", "token"); err != nil {
			return err
		}
		if err := g.nvtx(cupti.NVTXPop, g.t, main, 0, "", ""); err != nil {
			return err
		}
		if len(g.pending) > 0 && g.rng.IntN(2) == 0 {
			if err := g.flushGPU(); err != nil {
				return err
			}
		}
	}
	g.t += 2_000
	if err := g.nvtx(cupti.NVTXPop, g.t, main, 0, "", ""); err != nil {
		return err
	}
	if err := g.flushGPU(); err != nil {
		return err
	}
	if c.SideThread {
		if err := g.nvtx(cupti.NVTXEnd, g.t+5_000, side, 1, "", ""); err != nil {
			return err
		}
	} else if err := g.nvtx(cupti.NVTXEnd, g.t+5_000, main, 1, "", ""); err != nil {
		return err
	}
	if c.Truncate {
		return nil
	}
	return g.w.Write(&cupti.End{Records: g.nrec, Dropped: 0})
}
