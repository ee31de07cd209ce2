// Input that may be gzipped.

package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// IsGzip reports whether br starts with gzip's magic bytes (it only peeks).
func IsGzip(br *bufio.Reader) bool {
	magic, _ := br.Peek(2)
	return len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
}

// Reader decompresses a gzip stream; a stream that ends early reads as an
// error that says the file was cut short.
type Reader struct{ *gzip.Reader }

// NewReader starts reading the gzip stream r.
func NewReader(r io.Reader) (*Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	return &Reader{zr}, nil
}

// Read is gzip's, with io.ErrUnexpectedEOF explained.
func (g *Reader) Read(p []byte) (int, error) {
	n, err := g.Reader.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("the gzip data ends early (the file was cut short): %w", err)
	}
	return n, err
}

// Maybe is br itself, or its gzip stream when it holds one.
func Maybe(br *bufio.Reader) (io.Reader, error) {
	if !IsGzip(br) {
		return br, nil
	}
	return NewReader(br)
}
