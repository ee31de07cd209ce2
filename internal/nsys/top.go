package nsys

import "github.com/llm-perf-opt/deepprof/internal/model"

// TopN returns the n kernels with the largest total time (all of them when
// n <= 0) as model.KernelStats rows, sorted as model.SortKernels sorts (total
// descending, ties by name). Rows with the same name are summed into one, as
// the kernels.json contract has one row per name and device.
//
// Device is 0 on every row: cuda_gpu_kern_sum sums a kernel over every GPU of
// the capture and does not say which. Calls is Instances; MeanMS is
// TotalMS / max(Calls, 1), as the contract defines it (not nsys's Avg column,
// which agrees up to rounding).
func TopN(sums []KernelSum, n int) []model.KernelStats {
	recs := make([]model.KernelStats, 0, len(sums))
	at := make(map[string]int, len(sums))
	for _, s := range sums {
		if i, ok := at[s.Name]; ok {
			recs[i].TotalMS += s.TotalNS / 1e6
			recs[i].Calls += s.Instances
			continue
		}
		at[s.Name] = len(recs)
		recs = append(recs, model.KernelStats{KernelTotals: model.KernelTotals{Name: s.Name, TotalMS: s.TotalNS / 1e6, Calls: s.Instances}})
	}
	for i := range recs {
		recs[i].MeanMS = recs[i].TotalMS / float64(max(recs[i].Calls, 1))
	}
	model.SortKernels(recs)
	if n > 0 && len(recs) > n {
		recs = recs[:n:n]
	}
	return recs
}

// Coverage is the share (0 to 1) of the summed kernel time of sums that the
// records top cover: how much of the GPU time a deep pass over only those
// kernels can explain. It is 0 when sums hold no time.
func Coverage(sums []KernelSum, top []model.KernelStats) float64 {
	var all, part float64
	for _, s := range sums {
		all += s.TotalNS / 1e6
	}
	for _, r := range top {
		part += r.TotalMS
	}
	if all <= 0 {
		return 0
	}
	return min(part/all, 1)
}

// Table is the kernel table of a whole cuda_gpu_kern_sum export, as
// model.KernelAggregator makes one from ncu launches: every kernel (TopN(sums, 0)), the
// launches (the summed Instances) and their summed time. nsys timed every
// launch of the capture, so these are exact totals, not a sample. Rows read
// from a :base summary make a table of kernel functions.
func Table(sums []KernelSum, source string) model.KernelTable {
	recs := TopN(sums, 0)
	t := model.KernelTable{Source: source, Count: len(recs), Kernels: recs}
	for _, s := range sums {
		t.Launches += s.Instances
		t.TotalMS += s.TotalNS / 1e6
	}
	return t
}
