package timeline

import (
	"testing"

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
