package cupti

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Writer writes records in the canonical form: the header's known keys
// first, in the format's order, then its other keys as read; integers in
// decimal without leading zeros; strings escaped. Reading back what it wrote
// gives the same records (Line fields aside).
type Writer struct {
	w   *bufio.Writer
	buf []byte
}

// NewWriter returns a Writer to w. Call Flush when done.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 64<<10)} }

// Flush writes any buffered data.
func (w *Writer) Flush() error { return w.w.Flush() }

// Write writes one record; a *SyntaxError is not a record that can be written.
func (w *Writer) Write(rec Record) error {
	b := w.buf[:0]
	switch r := rec.(type) {
	case *Header:
		b = append(b, Magic...)
		b = kv(b, keyPID, strconv.FormatInt(r.PID, 10))
		b = kv(b, keyPPID, strconv.FormatInt(r.PPID, 10))
		b = kv(b, keyCUPTIAPI, strconv.FormatInt(r.CUPTIAPI, 10))
		b = kv(b, keyCUDADriver, strconv.FormatInt(r.CUDADriver, 10))
		b = kv(b, keyStartNS, strconv.FormatInt(r.StartNS, 10))
		b = kv(b, keyExe, r.Exe)
		for _, e := range r.Extra {
			b = kv(b, e.Key, e.Value)
		}
	case *KernelRecord:
		b = append(b, 'K')
		b = ints(b, r.Start, r.End, int64(r.Device), int64(r.Context), int64(r.Stream), int64(r.Correlation))
		b = dim3(b, r.Grid)
		b = dim3(b, r.Block)
		b = ints(b, int64(r.Registers), int64(r.StaticShared), int64(r.DynamicShared))
		b = str(b, r.Mangled)
		b = str(b, r.Demangled)
	case *Memcpy:
		b = append(b, 'C')
		b = ints(b, r.Start, r.End, int64(r.Device), int64(r.Context), int64(r.Stream), int64(r.Correlation))
		b = str(b, string(r.Kind))
		b = u64(b, r.Bytes)
	case *Memset:
		b = append(b, 'S')
		b = ints(b, r.Start, r.End, int64(r.Device), int64(r.Context), int64(r.Stream), int64(r.Correlation))
		b = u64(b, r.Bytes)
	case *API:
		b = append(b, 'A')
		b = ints(b, r.Start, r.End, r.Thread, int64(r.Correlation))
		b = str(b, string(r.Kind))
		b = ints(b, int64(r.CBID))
		b = str(b, r.Function)
	case *NVTX:
		b = append(b, 'N')
		b = str(b, string(r.Kind))
		b = ints(b, r.TS, r.Thread)
		b = u64(b, r.ID)
		b = str(b, r.Domain)
		b = str(b, r.Name)
	case *Metric:
		b = append(b, 'M')
		b = ints(b, int64(r.Correlation))
		b = str(b, r.Name)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, r.Value, 'g', -1, 64)
	case *Window:
		b = append(b, 'W')
		b = ints(b, int64(r.Correlation), r.Start, r.End)
	case *Note:
		b = append(b, 'X')
		b = str(b, r.Key)
		b = str(b, r.Value)
	case *End:
		b = append(b, 'E')
		b = u64(b, r.Records)
		b = u64(b, r.Dropped)
	default:
		return fmt.Errorf("cupti: cannot write a %T", rec)
	}
	b = append(b, '\n')
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

func kv(b []byte, k, v string) []byte {
	b = append(b, '\t')
	b = appendEscaped(b, k)
	b = append(b, '=')
	return appendEscaped(b, v)
}

func ints(b []byte, vs ...int64) []byte {
	for _, v := range vs {
		b = append(b, '\t')
		b = strconv.AppendInt(b, v, 10)
	}
	return b
}

func u64(b []byte, v uint64) []byte {
	b = append(b, '\t')
	return strconv.AppendUint(b, v, 10)
}

func dim3(b []byte, d Dim3) []byte {
	b = append(b, '\t')
	b = strconv.AppendUint(b, uint64(d.X), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(d.Y), 10)
	b = append(b, ',')
	return strconv.AppendUint(b, uint64(d.Z), 10)
}

func str(b []byte, s string) []byte {
	b = append(b, '\t')
	return appendEscaped(b, s)
}
