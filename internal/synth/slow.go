// SYNTHETIC slowdowns planted in a recorded run's CUPTI records, for tests
// of the regression gate (see the package documentation, "Run
// directories").

package synth

import (
	"slices"
	"strconv"
	"strings"
)

// kernelLine is a K record's fields that a slowdown reads.
type kernelLine struct {
	i          int // the line's index
	start, end int64
	stream     string // device, context and stream
	name       string // demangled, else mangled
}

func parseKernels(lines []string) []kernelLine {
	var ks []kernelLine
	for i, l := range lines {
		f := strings.Split(l, "\t")
		if f[0] != "K" || len(f) < 14 {
			continue
		}
		start, err1 := strconv.ParseInt(f[1], 10, 64)
		end, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		name := f[13]
		if name == "" {
			name = f[12]
		}
		ks = append(ks, kernelLine{i: i, start: start, end: end, stream: f[3] + "/" + f[4] + "/" + f[5], name: name})
	}
	return ks
}

func setSpan(line string, start, end int64) string {
	f := strings.Split(line, "\t")
	f[1], f[2] = strconv.FormatInt(start, 10), strconv.FormatInt(end, 10)
	return strings.Join(f, "\t")
}

// StretchKernels makes every launch of the named kernels f times as long
// in a copied run's CUPTI records (EditRecords), each capped at the start
// of the next kernel on the same stream: a slowdown the stream's idle
// absorbs, nothing else moved. Rebuild the copy (deepprof report) to see
// it in the derived files.
func StretchKernels(label string, names []string, f float64) Edit {
	return EditRecords(label, func(lines []string) []string {
		ks := parseKernels(lines)
		slices.SortFunc(ks, func(a, b kernelLine) int {
			if c := strings.Compare(a.stream, b.stream); c != 0 {
				return c
			}
			return int(a.start - b.start)
		})
		for j, k := range ks {
			if !slices.Contains(names, k.name) {
				continue
			}
			end := k.start + int64(float64(k.end-k.start)*f)
			if j+1 < len(ks) && ks[j+1].stream == k.stream {
				end = min(end, max(ks[j+1].start, k.end))
			}
			lines[k.i] = setSpan(lines[k.i], k.start, end)
		}
		return lines
	})
}

// SlowRange makes every kernel launched inside the push/pop range named
// rng (its launch call between the range's push and pop on the thread
// that pushed it) f times as long in a copied run's CUPTI records, and
// moves every later record (kernels, copies, sets, calls, NVTX) later by
// the time the stretched kernels added before it: a GPU-bound program,
// whose host waits on the GPU, slowed in that range's GPU work.
func SlowRange(label, rng string, f float64) Edit {
	return EditRecords(label, func(lines []string) []string {
		// The range's instances: [push, pop] on the pushing thread.
		type span struct{ from, to int64 }
		var spans []span
		open := map[string][]int64{} // thread: push times of the range, by depth
		depth := map[string][]string{}
		for _, l := range lines {
			f := strings.Split(l, "\t")
			if f[0] != "N" || len(f) < 7 {
				continue
			}
			ts, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				continue
			}
			tid := f[3] + "/" + f[4] + "/" + f[5] // NVTX keeps a stack per thread and domain
			switch f[1] {
			case "push":
				depth[tid] = append(depth[tid], f[6])
				open[tid] = append(open[tid], ts)
			case "pop":
				n := len(depth[tid])
				if n == 0 {
					continue
				}
				if depth[tid][n-1] == rng {
					spans = append(spans, span{open[tid][n-1], ts})
				}
				depth[tid], open[tid] = depth[tid][:n-1], open[tid][:n-1]
			}
		}
		inside := func(t int64) bool {
			return slices.ContainsFunc(spans, func(s span) bool { return t >= s.from && t <= s.to })
		}
		// Launch calls by correlation id: A start end tid correlation ...
		launch := map[string]int64{}
		for _, l := range lines {
			if f := strings.Split(l, "\t"); f[0] == "A" && len(f) > 4 {
				if t, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					launch[f[4]] = t
				}
			}
		}
		// Each stretched kernel adds its extra time from its end on.
		type add struct{ at, ns int64 }
		var adds []add
		stretched := map[int]bool{}
		for i, l := range lines {
			fs := strings.Split(l, "\t")
			if fs[0] != "K" || len(fs) < 14 {
				continue
			}
			start, _ := strconv.ParseInt(fs[1], 10, 64)
			end, _ := strconv.ParseInt(fs[2], 10, 64)
			at, ok := launch[fs[6]]
			if !ok {
				at = start
			}
			if !inside(at) {
				continue
			}
			stretched[i] = true
			adds = append(adds, add{end, int64(float64(end-start) * (f - 1))})
		}
		slices.SortFunc(adds, func(a, b add) int { return int(a.at - b.at) })
		cum := make([]int64, len(adds)+1)
		for i, a := range adds {
			cum[i+1] = cum[i] + a.ns
		}
		// shift is the time added by the stretched kernels that ended
		// before t (strictly: a kernel's own end takes its own stretch
		// below).
		shift := func(t int64) int64 {
			n, _ := slices.BinarySearchFunc(adds, t, func(a add, t int64) int {
				if a.at < t {
					return -1
				}
				return 1
			})
			return cum[n]
		}
		for i, l := range lines {
			fs := strings.Split(l, "\t")
			var cols []int
			switch fs[0] {
			case "K", "C", "S", "A":
				cols = []int{1, 2}
			case "N":
				cols = []int{2}
			default:
				continue
			}
			var ts []int64
			for _, c := range cols {
				v, err := strconv.ParseInt(fs[c], 10, 64)
				if err != nil {
					ts = nil
					break
				}
				ts = append(ts, v)
			}
			if ts == nil {
				continue
			}
			if fs[0] == "K" {
				start, end := ts[0], ts[1]
				newStart := start + shift(start)
				newEnd := end + shift(end)
				if stretched[i] {
					newEnd = newStart + int64(float64(end-start)*f)
				}
				lines[i] = setSpan(l, newStart, max(newEnd, newStart))
				continue
			}
			for j, c := range cols {
				fs[c] = strconv.FormatInt(ts[j]+shift(ts[j]), 10)
			}
			lines[i] = strings.Join(fs, "\t")
		}
		return lines
	})
}
