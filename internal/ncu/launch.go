package ncu

// Record is what Reader.Record returns: a *model.Launch or a
// *model.SyntaxError.
type Record = any
