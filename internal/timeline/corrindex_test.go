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
			x := newCorrIndex(apis, lo, hi)
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
	assert.Equal(t, int32(-1), newCorrIndex(nil, 0, 0).find(0), "no call at all")
}
