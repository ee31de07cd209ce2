package timeline

import (
	"cmp"
	"slices"
)

// corrIndex finds a process's launch call by its correlation id. CUPTI
// numbers a process's calls from 1 up: where the ids kept are dense
// enough, a table indexed by id answers at once; else a search of the
// calls sorted by id.
type corrIndex struct {
	apis []API
	base uint32
	// dense is the call of each id from base (its index in apis, plus 1;
	// 0: none); nil where the ids are too sparse.
	dense []int32
	// byCorr is the calls' indexes sorted by id, where dense is nil.
	byCorr []int32
}

// maxSparse bounds the table: at most this many entries a call.
const maxSparse = 4

// newCorrIndex indexes apis, whose correlation ids are distinct.
func newCorrIndex(apis []API) *corrIndex {
	x := &corrIndex{apis: apis}
	var hi uint32
	for i := range apis {
		c := apis[i].Correlation
		if i == 0 || c < x.base {
			x.base = c
		}
		hi = max(hi, c)
	}
	lo := x.base
	if len(apis) > 0 && uint64(hi-lo) < uint64(maxSparse*len(apis)) {
		x.dense = make([]int32, uint64(hi-lo)+1)
		for i := range apis {
			x.dense[apis[i].Correlation-lo] = int32(i + 1)
		}
		return x
	}
	x.byCorr = make([]int32, len(apis))
	for i := range x.byCorr {
		x.byCorr[i] = int32(i)
	}
	slices.SortFunc(x.byCorr, func(a, b int32) int { return cmp.Compare(apis[a].Correlation, apis[b].Correlation) })
	return x
}

// find is the index in apis of the call of id corr, -1 where none is.
func (x *corrIndex) find(corr uint32) int32 {
	if x.dense != nil {
		if corr < x.base || uint64(corr-x.base) >= uint64(len(x.dense)) {
			return -1
		}
		return x.dense[corr-x.base] - 1
	}
	j, ok := slices.BinarySearchFunc(x.byCorr, corr, func(i int32, c uint32) int { return cmp.Compare(x.apis[i].Correlation, c) })
	if !ok {
		return -1
	}
	return x.byCorr[j]
}
