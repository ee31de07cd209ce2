package summary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/input"
)

// Read reads summary.json strictly, as a test or a gate that trusts its
// figures needs it: a key given twice (a second "kernels" emptying the
// table), another format, or a figure no run can have (a negative time or
// count, a share outside 0-1, an MFU over 1) is an error that names the
// file and the key. name positions the errors.
func Read(data []byte, name string) (facts.Summary, error) {
	var s facts.Summary
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := input.NoDuplicateKeys(data, name); err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		if off, ok := input.Offset(err); ok {
			return s, fmt.Errorf("%s:%d: %w", name, input.Line(data, off), err)
		}
		return s, fmt.Errorf("%s: %w", name, err)
	}
	if s.Format != Format {
		return s, fmt.Errorf("%s: format %q: want %q (the summary deepprof report writes)", name, s.Format, Format)
	}
	var errs []error
	bad := func(key string, v any, want string) {
		errs = append(errs, fmt.Errorf("%s: %s = %v: want %s", name, key, v, want))
	}
	ms := func(key string, v float64) {
		if !(v >= 0) || math.IsInf(v, 0) {
			bad(key, v, "a time of at least 0")
		}
	}
	share := func(key string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad(key, v, "a share from 0 to 1")
		}
	}
	for i, r := range s.Stages.Rows {
		k := fmt.Sprintf("stages.rows[%d]", i)
		ms(k+".mean_ms", r.MeanMS)
		ms(k+".sd_ms", r.SDMS)
		if r.N < 0 {
			bad(k+".n", r.N, "a count of at least 0")
		}
		for j, v := range r.MS {
			ms(fmt.Sprintf("%s.ms[%d]", k, j), v)
		}
	}
	ms("kernels.total_ms", s.Kernels.TotalMS)
	var sum float64
	for i, r := range s.Kernels.Rows {
		k := fmt.Sprintf("kernels.rows[%d]", i)
		ms(k+".total_ms", r.TotalMS)
		share(k+".share", r.Share)
		if r.Calls < 0 {
			bad(k+".calls", r.Calls, "a count of at least 0")
		}
		sum += r.TotalMS
	}
	if s.Kernels.TotalMS > 0 && sum > s.Kernels.TotalMS*(1+1e-6)+1e-9 {
		bad("kernels.total_ms", s.Kernels.TotalMS, fmt.Sprintf("at least its rows' sum, %v", sum))
	}
	for i, r := range s.Regions.Rows {
		k := fmt.Sprintf("regions.rows[%d]", i)
		ms(k+".total_ms", r.TotalMS)
		share(k+".share", r.Share)
	}
	for _, m := range []struct {
		key string
		v   *float64
	}{{"mfu.model", s.MFU.Model}, {"mfu.prefill", s.MFU.Prefill}, {"mfu.decode", s.MFU.Decode}, {"serving.mbu", s.Serving.MBU}} {
		if m.v != nil {
			share(m.key, *m.v)
		}
	}
	for i, r := range s.MFU.Rows {
		share(fmt.Sprintf("mfu.rows[%d].mfu", i), r.MFU)
	}
	return s, errors.Join(errs...)
}
