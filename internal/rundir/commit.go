package rundir

import (
	"io"
	"strings"
)

// Output is one derived file or folder of a run as rendered, or why it is
// not made: what Commit writes into the run and records in its manifest.
type Output struct {
	Rel    string
	Data   []byte
	Stream func(io.Writer) error // a file written as it is made
	// Written waits for a file written beside the rest of the rebuild
	// (the trace) and gives its error.
	Written func() error
	// Dir is a folder replaced whole (IsDir); Records are the files of it
	// the manifest lists.
	Dir     []File
	IsDir   bool
	Records []string
	Status  Status // "" is complete
	Reason  string
	// Missing is why the output is not made: recorded missing, and an
	// earlier copy of a folder removed. Fails says that this also fails
	// the rebuild.
	Missing error
	Fails   bool
	// RemoveNow removes an earlier copy of a missing file at once (else
	// RemoveStale does, and says so in a note).
	RemoveNow bool
	// Skipped is why an optional output is not made (a chart without
	// data): recorded skipped, an earlier copy removed.
	Skipped string
	// Forget: the run has no input for it at all: removed, and dropped
	// from the manifest.
	Forget bool
}

// Commit writes each output into the run and records it in the manifest.
// failed gets the outputs that could not be written, by path; the errors
// returned are what fails the rebuild (a failed write, or a missing output
// that Fails).
func (r *Run) Commit(outs []Output, failed map[string]error) []error {
	var errs []error
	for _, o := range outs {
		records := o.Records
		if len(records) == 0 {
			records = []string{o.Rel}
		}
		recordAll := func(st Status, reason string) {
			for _, rel := range records {
				r.Record(rel, st, reason)
			}
		}
		var err error
		switch {
		case o.Forget:
			r.Remove(o.Rel)
			r.Forget(o.Rel)
			continue
		case o.Skipped != "":
			r.Remove(o.Rel) // an earlier rebuild's is not this one's
			r.Record(o.Rel, StatusSkipped, o.Skipped)
			continue
		case o.Missing != nil && o.IsDir:
			// The folders above it are the run's, never a link out of it:
			// RemoveAll would remove what the link points into.
			if err = MkdirIn(r.Dir, r.Path(parentOf(o.Rel))); err == nil {
				err = RemoveAllIn(r.Dir, r.Path(o.Rel))
			}
			if err == nil {
				recordAll(StatusMissing, o.Missing.Error())
				if o.Fails {
					errs = append(errs, o.Missing)
				}
				continue
			}
		case o.Missing != nil:
			if o.RemoveNow {
				r.Remove(o.Rel)
			}
			recordAll(StatusMissing, o.Missing.Error())
			if o.Fails {
				errs = append(errs, o.Missing)
			}
			continue
		case o.IsDir:
			if err = MkdirIn(r.Dir, r.Path(parentOf(o.Rel))); err == nil {
				err = ReplaceDirIn(r.Dir, r.Path(o.Rel), o.Dir)
			}
		case o.Written != nil:
			err = o.Written()
		case o.Stream != nil:
			err = r.WriteStream(o.Rel, o.Stream)
		default:
			err = WriteFileAtomicIn(r.Dir, r.Path(o.Rel), o.Data)
		}
		if err != nil {
			failed[o.Rel] = err
			recordAll(StatusMissing, err.Error())
			errs = append(errs, err)
			continue
		}
		st := o.Status
		if st == "" {
			st = StatusComplete
		}
		recordAll(st, o.Reason)
	}
	return errs
}

// parentOf is the folder of a slash-separated path ("." at the top).
func parentOf(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i]
	}
	return "."
}
