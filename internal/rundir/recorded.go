package rundir

// Recorded is what a run holds for a rebuild to read, as it stands once
// its manifest is in line with its files (Run.MatchFiles): plain data, so
// that a reader asks it, not the directory, which files there are.
type Recorded struct {
	// Manifest is the manifest in line with the files.
	Manifest Manifest
	// Present are the raw, provenance and log files of the layout that
	// are there, plain or gzipped (Run.Exists).
	Present map[string]bool
	// Partial are the files the manifest calls partial (a session could
	// not read one when it made it).
	Partial map[string]bool
	// Exports are the files of each ncu CSV export that is there
	// (Run.ExportFiles): the one file, or one per rank.
	Exports map[string][]string
	// CuptiFiles are the CUPTI record files (CuptiFiles), and
	// CuptiAnomalies what of the record folder cannot be read
	// (CuptiFileAnomalies).
	CuptiFiles     []string
	CuptiAnomalies []string
}

// ncuExports are the ncu CSV exports a rebuild reads.
var ncuExports = []string{NcuTimingRaw, NcuRaw, NcuDetails}

// ExportFiles are the files of the export rel (Recorded.Exports); rel
// itself when the run has none, so that reading it says it is not there.
func (r Recorded) ExportFiles(rel string) []string {
	if files := r.Exports[rel]; len(files) > 0 {
		return files
	}
	return []string{rel}
}

// MatchFiles brings the manifest in line with MAIN before a rebuild reads
// the run, and returns what the run then holds to read: what killed
// writers left goes (it was never part of the run), an earlier rebuild's
// partial mark is cleared, the inputs are recorded, what is not there is
// absent, and the notes a rebuild says again are dropped. The error is the
// sweep's.
func (r *Run) MatchFiles() (Recorded, error) {
	err := r.Sweep()
	r.ClearRebuild()
	present := r.recordInputs()
	r.CheckPresence()
	r.DropNotes(NoteAnomaly, NoteRemoved)
	rec := Recorded{Manifest: r.Manifest(), Present: present, Exports: map[string][]string{},
		CuptiFiles: CuptiFiles(r), CuptiAnomalies: CuptiFileAnomalies(r)}
	rec.Partial = map[string]bool{}
	for _, a := range rec.Manifest.Artifacts {
		if a.Status == StatusPartial {
			rec.Partial[a.Path] = true
		}
	}
	for _, rel := range ncuExports {
		if r.HasExport(rel) {
			rec.Exports[rel] = r.ExportFiles(rel)
		}
	}
	return rec, err
}

// recordInputs lists in the manifest every raw output, log and provenance
// file of the layout that is in MAIN and that the manifest does not call
// made (a run directory assembled by hand, or one whose session stopped
// before it recorded them); provenance files that are not there are
// listed as missing. It returns the files that are there.
func (r *Run) recordInputs() map[string]bool {
	present := map[string]bool{}
	m := r.Manifest()
	for _, s := range Layout() {
		if s.Kind == Derived || s.Kind == Index || s.Dir {
			continue
		}
		a, listed := m.Find(s.Path)
		switch {
		case r.Exists(s.Path):
			present[s.Path] = true
			if !listed || a.Status == StatusMissing {
				r.Record(s.Path, StatusComplete, "")
			}
		case s.Kind == Provenance && !listed:
			r.Record(s.Path, StatusMissing, "not in this run directory (written by deepprof profile)")
		}
	}
	return present
}
