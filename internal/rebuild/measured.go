package rebuild

import (
	"strconv"

	"github.com/llm-perf-opt/deepprof/internal/kernels"
	"github.com/llm-perf-opt/deepprof/internal/model"
	"github.com/llm-perf-opt/deepprof/internal/timeline"
)

// libraryMetrics is each kernel's deep metrics as deepprof's CUPTI library
// measured them in the recorded run (timeline.Measurement), by kernel name,
// in the shape ncu's deep pass gives them; nil when no launch was measured.
// A metric this deepprof does not read is left out; a measured launch
// whose K record is missing names no kernel and is left out too.
func libraryMetrics(tl *timeline.Timeline) (map[string]*kernels.Metrics, error) {
	a := kernels.NewAccumulator()
	n := 0
	for _, p := range tl.Processes {
		x := &model.Export{Source: p.File, Format: model.FormatMeasured}
		for _, m := range p.Measured {
			l, ok := measuredLaunch(p, m)
			if !ok {
				continue
			}
			if err := a.Launch(x, &l); err != nil {
				return nil, err
			}
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	return a.Metrics(), nil
}

// measuredLaunch is a measured launch in the shape of an ncu launch: its
// kernel and configuration from its K record, its metrics in base units;
// false when it names no kernel or has no metric.
func measuredLaunch(p *timeline.Process, m timeline.Measurement) (model.Launch, bool) {
	if !m.Named() {
		return model.Launch{}, false
	}
	l := model.Launch{Line: m.Metrics[0].Line, ID: int64(m.Correlation), ProcessID: p.Header.PID,
		Kernel: m.Function.Name(), GridSize: m.Grid.String(), BlockSize: m.Block.String(),
		Device: model.DeviceID(m.Device)}
	for _, mt := range m.Metrics {
		unit, ok := kernels.MeasuredUnit(mt.Name)
		if !ok {
			continue
		}
		v := model.Value{Base: mt.Value, Unit: unit, Orig: strconv.FormatFloat(mt.Value, 'g', -1, 64), OrigUnit: unit, Valid: true}
		if mt.Name == model.DurationMetric {
			l.Duration, l.DurationMetric = v, mt.Name
			continue
		}
		l.Metrics = append(l.Metrics, model.Metric{Name: mt.Name, Value: v})
	}
	return l, true
}
