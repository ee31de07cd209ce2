package ncu

import "github.com/llm-perf-opt/deepprof/internal/model"

// KernelHandler counts every launch of a Scan into a (its Add), so that one
// Scan of an export can feed a kernel table and other results.
func KernelHandler(a *model.KernelAggregator) model.Handler {
	return model.HandlerFunc(func(x *model.Export, l *model.Launch) error { return a.Add(x.Source, l) })
}

// KernelTable aggregates every launch of r. The first malformed row or
// launch ends it with a positioned error: a kernel table is not made from a
// file that was only partly understood.
func KernelTable(r *Reader, source string) (model.KernelTable, error) {
	a := model.NewKernelAggregator()
	if err := Scan(r, source, KernelHandler(a))[0]; err != nil {
		return model.KernelTable{}, err
	}
	return a.Table(source), nil
}
