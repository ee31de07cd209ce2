package rundir

import (
	"io"
	"slices"
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
	// Dir are the files of a folder (IsDir), relative to it: each is
	// written and listed in the manifest, and the files an earlier build
	// wrote there and this one does not are removed; nothing else in the
	// folder is touched. Records are the files of it the manifest lists
	// as missing when the folder is not made.
	Dir     []File
	IsDir   bool
	Records []string
	Status  Status // "" is complete
	Reason  string
	// Missing is why the output is not made: recorded missing, and an
	// earlier build's files of a folder removed. Fails says that this
	// also fails the rebuild.
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
// that Fails). It replaces and removes only what deepprof wrote (the
// derived files the manifest lists, and what this process wrote): call
// CheckDerived first, so that no file of the user's is where an output
// goes.
func (r *Run) Commit(outs []Output, failed map[string]error) []error {
	var errs []error
	for _, o := range outs {
		records := o.Records
		if len(records) == 0 {
			records = []string{o.Rel}
		}
		recordAll := func(st Status, reason string) { r.recordMany(records, st, reason) }
		var err error
		switch {
		case o.Forget:
			r.removeDerived(o.Rel)
			r.Forget(o.Rel)
			continue
		case o.Skipped != "":
			r.removeDerived(o.Rel) // an earlier rebuild's is not this one's
			r.Record(o.Rel, StatusSkipped, o.Skipped)
			continue
		case o.Missing != nil && o.IsDir:
			_, err = r.clearDir(o.Rel, nil)
			r.forgetUnder(o.Rel, records)
			if err == nil {
				recordAll(StatusMissing, o.Missing.Error())
				if o.Fails {
					errs = append(errs, o.Missing)
				}
				continue
			}
		case o.Missing != nil:
			if o.RemoveNow {
				r.removeDerived(o.Rel)
			}
			recordAll(StatusMissing, o.Missing.Error())
			if o.Fails {
				errs = append(errs, o.Missing)
			}
			continue
		case o.IsDir:
			var written []string
			written, _, err = r.writeDir(o.Rel, o.Dir)
			if err == nil {
				records = written
				r.forgetUnder(o.Rel, written)
			}
		case o.Written != nil:
			r.claim(o.Rel)
			err = o.Written()
		case o.Stream != nil:
			err = r.WriteStream(o.Rel, o.Stream)
		default:
			r.claim(o.Rel)
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

// forgetUnder drops from the manifest every file listed under the folder
// dir but those of keep: the files of a folder an earlier build wrote that
// this one does not.
func (r *Run) forgetUnder(dir string, keep []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	kept := make(map[string]bool, len(keep))
	for _, rel := range keep {
		kept[rel] = true
	}
	r.manifest.Artifacts = slices.DeleteFunc(r.manifest.Artifacts, func(a Artifact) bool {
		return strings.HasPrefix(a.Path, dir+"/") && !kept[a.Path]
	})
}
