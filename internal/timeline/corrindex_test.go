package timeline

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCorrIndex: dense ids and sparse ones find the same calls, and an id
// no call has finds none, below, between and above the ids kept.
func TestCorrIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ids   []uint32 // in the order of the calls' starts
		dense bool
	}{
		{"dense", []uint32{7, 5, 6, 9}, true},
		{"sparse", []uint32{7, 5, 100, 9}, false},
		{"one", []uint32{3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apis := make([]API, len(tc.ids))
			lo, hi := tc.ids[0], tc.ids[0]
			for i, id := range tc.ids {
				apis[i].Correlation = id
				lo, hi = min(lo, id), max(hi, id)
			}
			x := newCorrIndex(apis)
			assert.Equal(t, tc.dense, x.dense != nil, "a table, not a search")
			for i, id := range tc.ids {
				assert.Equal(t, int32(i), x.find(id), "id %d", id)
			}
			for _, id := range []uint32{0, lo - 1, 8, hi + 1, 1 << 31} {
				if id == 8 && tc.name == "one" {
					continue
				}
				assert.Equal(t, int32(-1), x.find(id), "id %d: no call", id)
			}
		})
	}
	assert.Equal(t, int32(-1), newCorrIndex(nil).find(0), "no call at all")
	ends := newCorrIndex([]API{{Correlation: 1<<32 - 1}, {Correlation: 1<<32 - 2}})
	assert.NotNil(t, ends.dense)
	assert.Equal(t, []int32{1, 0, -1, -1}, []int32{ends.find(1<<32 - 2), ends.find(1<<32 - 1), ends.find(0), ends.find(1<<32 - 3)}, "ids at the top of uint32")
	far := newCorrIndex([]API{{Correlation: 0}, {Correlation: 1<<32 - 1}})
	assert.Nil(t, far.dense)
	assert.Equal(t, []int32{0, 1, -1}, []int32{far.find(0), far.find(1<<32 - 1), far.find(7)}, "ids at both ends of uint32")
}
