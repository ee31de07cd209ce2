// Whole files read with a cap on their size (MaxBytes).

package input

import (
	"fmt"
	"io"
	"os"
)

// MaxBytes is the most bytes read of one file: far above any file deepprof
// writes or reads whole (the largest recorded summary.json is about 60 KB,
// a regions report.json of an 8B model a few MB). Tests lower it.
var MaxBytes int64 = 256 << 20

// TooLargeError is an input over MaxBytes.
type TooLargeError struct {
	Name string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s: not a deepprof file?", e.Name, size(e.Max))
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadAll reads r to its end, as io.ReadAll does, but at most MaxBytes: a
// longer input is a *TooLargeError naming name, after MaxBytes+1 bytes
// read. Every error names name.
func ReadAll(r io.Reader, name string) ([]byte, error) {
	max := MaxBytes
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Name: name, Max: max}
	}
	return b, nil
}

// ReadFile reads the file path, as os.ReadFile does, but at most MaxBytes:
// a regular file over the cap is refused before it is read, anything else
// (a device, a pipe) after MaxBytes+1 bytes. Errors name path.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxBytes {
		return nil, &TooLargeError{Name: path, Max: MaxBytes}
	}
	return ReadAll(f, path)
}

// Tail reads the last MaxBytes of the file path at most: a log read for
// what it says at its end (ncu's errors and summary), where a long one
// keeps its last part. Errors name path.
func Tail(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxBytes {
		if _, err := f.Seek(fi.Size()-MaxBytes, io.SeekStart); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		b, err := io.ReadAll(io.LimitReader(f, MaxBytes))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > MaxBytes {
		b = b[int64(len(b))-MaxBytes:]
	}
	return b, nil
}
