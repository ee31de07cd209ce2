package phases

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// latencies keeps four bytes a launch for latencies under 2^32 ns and gives
// the count, mean (summed in ascending order), median and largest that the
// whole list sorted as int64 gives, with values below 0 and over 4.29 s
// among them (SYNTHETIC values).
func TestLatenciesSummary(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1001} {
		var l latencies
		var all []int64
		for i := range n {
			v := r.Int64N(1 << 20)
			switch i % 7 {
			case 3:
				v = -v - 1
			case 5:
				v += math.MaxUint32
			}
			l.add(v)
			all = append(all, v)
		}
		got := l.summary()
		slices.Sort(all)
		assert.Equal(t, int64(n), got.Count)
		if n == 0 {
			continue
		}
		var sum float64
		for _, v := range all {
			sum += float64(v)
		}
		med := float64(all[n/2])
		if n%2 == 0 {
			med = (float64(all[n/2-1]) + float64(all[n/2])) / 2
		}
		assert.Equal(t, sum/float64(n), got.MeanNS, "n=%d", n)
		assert.Equal(t, med, got.MedianNS, "n=%d", n)
		assert.Equal(t, all[n-1], got.MaxNS, "n=%d", n)
		assert.Less(t, len(l.other), n/2+1, "n=%d: most in four bytes", n)
	}
}
