package model

// Format names the shape of an export.
type Format string

// The export shapes the Reader knows.
const (
	FormatRaw     Format = "raw"     // --page raw: one row per launch
	FormatDetails Format = "details" // --page details: one row per metric or rule
	// FormatMeasured is deepprof's CUPTI library's measurements in the
	// recorded run: one launch per measured launch, no columns.
	FormatMeasured Format = "measured"
)

// Export is what the handlers of a scan of an ncu export know of the export it reads.
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
	// handler alone; the scan returns it as the handler's error.
	Launch(x *Export, l *Launch) error
}

// HandlerFunc is a function that is a Handler.
type HandlerFunc func(x *Export, l *Launch) error

// Launch calls f.
func (f HandlerFunc) Launch(x *Export, l *Launch) error { return f(x, l) }

// Launches is an export whose launches can be fed to handlers in one read
// (the ncu reader is one): Feed returns one error per handler, in order.
type Launches interface {
	Feed(source string, hs ...Handler) []error
}
