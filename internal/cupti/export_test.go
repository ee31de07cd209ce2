package cupti

import "io"

// NewParallelReaderSized is NewParallelReader with batches of about n
// bytes of lines (at most n/16 lines, at least one).
func NewParallelReaderSized(r io.Reader, name string, workers, n int) *Reader {
	rd := NewParallelReader(r, name, workers)
	if rd.par != nil {
		rd.par.batchBytes = n
	}
	return rd
}
