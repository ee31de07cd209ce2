package ncu

import "github.com/llm-perf-opt/deepprof/internal/model"

// Scan reads r, an export named source, once, and hands every launch to
// each handler in turn, so that several results are made from one read
// (in the manner of gotestsum's ScanTestOutput with its Handler).
//
// It returns one error per handler, in the handlers' order: the handler's
// own first error (after which it got no more launches), else what ended
// the read for every handler: the first malformed row (a positioned
// *SyntaxError: a result is not made from a file that was only partly
// understood), an I/O error, or an export with no launch at all. A handler
// that took every launch of a well-read export has nil. The read stops
// early once every handler has failed.
func Scan(r *Reader, source string, hs ...model.Handler) []error {
	errs := make([]error, len(hs))
	live := len(hs)
	fail := func(err error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	var x *model.Export
	for live > 0 && r.Scan() {
		switch rec := r.Record().(type) {
		case *model.SyntaxError:
			fail(rec)
			return errs
		case *model.Launch:
			if x == nil {
				x = &model.Export{Source: source, Format: r.Format(), Header: r.Header()}
			}
			for i, h := range hs {
				if errs[i] != nil {
					continue
				}
				if err := h.Launch(x, rec); err != nil {
					errs[i] = err
					live--
				}
			}
		}
	}
	if live == 0 {
		return errs
	}
	if err := r.Err(); err != nil {
		fail(err)
	} else if r.Launches() == 0 {
		fail(&model.SyntaxError{File: source, Line: 1, Msg: "the export holds no kernel launches"})
	}
	return errs
}

// Feed is Scan(r, source, hs...): a Reader is a model.Launches.
func (r *Reader) Feed(source string, hs ...model.Handler) []error { return Scan(r, source, hs...) }
