package timeline

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestChunksKeepOrderAcrossBlocks(t *testing.T) {
	var c chunks[int]
	n := 2*chunkLen + 3
	for i := range n {
		c.add(i)
	}
	all := c.all()
	assert.Len(t, all, n)
	assert.Equal(t, n, cap(all), "exactly the values added")
	for i, v := range all {
		if v != i {
			t.Fatalf("value %d is %d", i, v)
		}
	}
	assert.Empty(t, c.all(), "all empties the collection")
}

// TestRecordsHoldNoPointer: a process's kernels and launch calls, a
// record each a launch, hold no pointer, so the collector never scans
// them; what they point to is an index (Process.Fn, APIOf, RangeOf,
// CallOf).
func TestRecordsHoldNoPointer(t *testing.T) {
	for _, v := range []any{KernelExecution{}, API{}} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
				reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Float32, reflect.Float64:
			default:
				t.Errorf("%s.%s is a %s: a pointer the collector scans", typ.Name(), f.Name, f.Type.Kind())
			}
		}
	}
	assert.LessOrEqual(t, unsafe.Sizeof(KernelExecution{}), uintptr(40), "a kernel in 40 bytes")
}
