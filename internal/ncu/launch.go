package ncu

// Format names the shape of an export.
type Format string

// The export shapes the Reader knows.
const (
	FormatRaw     Format = "raw"     // --page raw: one row per launch
	FormatDetails Format = "details" // --page details: one row per metric or rule
)

// Record is what Reader.Record returns: a *model.Launch or a
// *model.SyntaxError.
type Record = any
