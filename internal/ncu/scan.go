package ncu

import "github.com/llm-perf-opt/deepprof/internal/model"

// Export is what the handlers of a Scan know of the export it reads.
type Export struct {
	Source string   // the export's name in errors and reports
	Format Format   // its shape
	Header []string // its column names
}

// Handler takes the launches of one export, one at a time, in input
// order; a kernel table, a region report and the classification are
// handlers. It must not change the launch: every handler of a Scan gets
// the same one.
type Handler interface {
	// Launch takes one launch of x. An error ends the launches to this
	// handler alone; Scan returns it as the handler's error.
	Launch(x *Export, l *model.Launch) error
}

// HandlerFunc is a function that is a Handler.
type HandlerFunc func(x *Export, l *model.Launch) error

// Launch calls f.
func (f HandlerFunc) Launch(x *Export, l *model.Launch) error { return f(x, l) }

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
func Scan(r *Reader, source string, hs ...Handler) []error {
	errs := make([]error, len(hs))
	live := len(hs)
	fail := func(err error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
	}
	var x *Export
	for live > 0 && r.Scan() {
		switch rec := r.Record().(type) {
		case *model.SyntaxError:
			fail(rec)
			return errs
		case *model.Launch:
			if x == nil {
				x = &Export{Source: source, Format: r.Format(), Header: r.Header()}
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
