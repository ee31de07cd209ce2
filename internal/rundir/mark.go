package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// MarkFormat names what RunMark holds, and its version.
const MarkFormat = "deepprof-run/1"

// Mark is what RunMark holds: its format and the run's id.
type Mark struct {
	Format string `json:"format"`
	RunID  string `json:"run_id"`
}

// markText is the mark of the run id as written: one JSON object, one line.
func markText(id string) []byte {
	b, _ := json.Marshal(Mark{Format: MarkFormat, RunID: id})
	return append(b, '\n')
}

// WriteMark writes RunMark into dir, marking it the run directory of the run
// id: what Create writes into each run directory it makes. It is for Create
// and for runs recorded before the mark existed (scripts/fixtures/mark-run):
// a folder it marks is one deepprof report may rewrite.
func WriteMark(dir, id string) error {
	if id == "" {
		return fmt.Errorf("%s: a run's mark needs its run id", dir)
	}
	return WriteFileAtomicIn(dir, filepath.Join(dir, RunMark), markText(id))
}

// ReadMark reads the RunMark of dir, through dir as an os.Root: a
// *NotRunDirError when there is none, or it is not a plain file, or it is
// not a mark deepprof writes (MarkFormat, a run id).
func ReadMark(dir string) (Mark, error) {
	b, err := ReadFileIn(dir, filepath.Join(dir, RunMark))
	var nr *NotRegularError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Mark{}, &NotRunDirError{Dir: dir, Missing: "no " + RunMark + ", the mark deepprof profile writes into every run directory it makes" +
			" (deepprof writes and removes files only in those)"}
	case errors.As(err, &nr) || errors.Is(err, ErrLinkOut):
		return Mark{}, &NotRunDirError{Dir: dir, Missing: RunMark + " is not a plain file of the folder: " + err.Error()}
	case err != nil:
		return Mark{}, err
	}
	var m Mark
	if err := json.Unmarshal(b, &m); err != nil || m.Format != MarkFormat || m.RunID == "" {
		return Mark{}, &NotRunDirError{Dir: dir, Missing: fmt.Sprintf("%s is not a mark this deepprof writes (%s with a run id)", RunMark, MarkFormat)}
	}
	return m, nil
}
