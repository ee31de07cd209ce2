package input

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadAll(t *testing.T) {
	defer func(m int64) { MaxBytes = m }(MaxBytes)
	MaxBytes = 1 << 20
	b, err := ReadAll(strings.NewReader("{}"), "x.json")
	if err != nil || string(b) != "{}" {
		t.Fatalf("ReadAll = %q, %v", b, err)
	}
	b, err = ReadAll(io.LimitReader(zeros{}, MaxBytes), "exact.json")
	if err != nil || int64(len(b)) != MaxBytes {
		t.Fatalf("at the cap: %d bytes, %v", len(b), err)
	}
	_, err = ReadAll(zeros{}, "/dev/zero")
	var tl *TooLargeError
	if !errors.As(err, &tl) || err.Error() != "/dev/zero: larger than 1 MiB: not a deepprof file?" {
		t.Fatalf("endless input: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	defer func(m int64) { MaxBytes = m }(MaxBytes)
	MaxBytes = 10
	dir := t.TempDir()
	p := filepath.Join(dir, "big.json")
	if err := os.WriteFile(p, []byte("01234567890"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); err == nil || err.Error() != p+": larger than 10 bytes: not a deepprof file?" {
		t.Fatalf("big file: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Fatalf("/dev/zero: %v", err)
		}
	}
}

// Tail keeps a long file's last MaxBytes and a short one whole.
func TestTail(t *testing.T) {
	old := MaxBytes
	MaxBytes = 8
	defer func() { MaxBytes = old }()
	dir := t.TempDir()
	long, short := filepath.Join(dir, "long.log"), filepath.Join(dir, "short.log")
	require.NoError(t, os.WriteFile(long, []byte("0123456789abcdef"), 0o644))
	require.NoError(t, os.WriteFile(short, []byte("abc"), 0o644))
	b, err := Tail(long)
	require.NoError(t, err)
	assert.Equal(t, "89abcdef", string(b))
	b, err = Tail(short)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(b))
	_, err = Tail(filepath.Join(dir, "none"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
