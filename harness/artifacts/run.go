package artifacts

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The files of a run directory, relative to MAIN: the DESIGN.md contract.
const (
	EnvJSON            = "env.json"
	ConfigYAML         = "config.yaml"
	InputsYAML         = "inputs.yaml"
	KernelsMD          = "kernels.md"
	KernelsJSON        = "kernels.json"
	StakeholderSummary = "stakeholder_summary.md"
	ReportMD           = "report.md"
	ManifestJSON       = "manifest.json"
	Stage1Report       = "stage1/report.json"
	Stage1Log          = "stage1/workload.log"
	NcuSections        = "ncu/sections.txt"
	NcuTimingReport    = "ncu/timing.ncu-rep"
	NcuTimingRaw       = "ncu/timing-raw.csv"
	NcuTimingFunctions = "ncu/timing-functions.csv" // the same page, --print-kernel-base function (runs before 2026-11-22 01:20)
	NcuTimingLog       = "ncu/timing.log"
	NcuDeepReport      = "ncu/deep.ncu-rep"
	NcuDiscoveryReport = "ncu/discovery.ncu-rep" // only when the NVTX filter matched nothing
	NcuDiscoveryLog    = "ncu/discovery.log"
	NcuDiscoveryRaw    = "ncu/discovery-raw.csv"
	NcuDeepLog         = "ncu/deep.log"
	NcuRaw             = "ncu/raw.csv"
	NcuDetails         = "ncu/details.csv"
	RegionsDir         = "ncu/regions"
	RegionsMD          = "ncu/regions/report.md"
	RegionsJSON        = "ncu/regions/report.json"
	NsysDir            = "nsys"
)

// NewRunID returns "<UTC timestamp>-<short random>", e.g.
// "20261121T223000Z-3f9a1c": sortable by time, unique across hosts.
func NewRunID(now time.Time, random io.Reader) (string, error) {
	var b [3]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:]), nil
}

// Run is one run directory being written.
type Run struct {
	ID  string
	Dir string // MAIN

	mu       sync.Mutex
	manifest Manifest
}

// ErrRunExists is returned by Create when MAIN already exists.
var ErrRunExists = errors.New("run directory exists")

// Create makes MAIN = root/id; id "" picks NewRunID. An existing MAIN is
// never reused: its results would be mixed with the new run's.
func Create(root, id string, now time.Time) (*Run, error) {
	if id == "" {
		var err error
		if id, err = NewRunID(now, rand.Reader); err != nil {
			return nil, err
		}
	}
	if !filepath.IsLocal(id) || strings.ContainsAny(id, `/\`) {
		return nil, fmt.Errorf("run id %q: want one plain directory name", id)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w: choose another run.id, or remove it", dir, ErrRunExists)
		}
		return nil, err
	}
	return &Run{ID: id, Dir: dir, manifest: Manifest{RunID: id, Status: StatusComplete, Started: now.UTC().Format(time.RFC3339)}}, nil
}

// Open returns the Run of an existing MAIN, with its manifest if it has one
// (for rebuilding derived files).
func Open(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a run directory", dir)
	}
	r := &Run{ID: filepath.Base(dir), Dir: dir, manifest: Manifest{RunID: filepath.Base(dir), Status: StatusComplete}}
	if b, err := os.ReadFile(filepath.Join(dir, ManifestJSON)); err == nil {
		if err := json.Unmarshal(b, &r.manifest); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestJSON), err)
		}
	}
	return r, nil
}

// Path is the absolute path of a file of the run, rel in slash form.
func (r *Run) Path(rel string) string { return filepath.Join(r.Dir, filepath.FromSlash(rel)) }

// Write writes one artifact atomically and records it in the manifest as
// complete (or as the status given).
func (r *Run) Write(rel string, data []byte) error {
	if err := WriteFileAtomic(r.Path(rel), data); err != nil {
		r.Record(rel, StatusMissing, err.Error())
		return err
	}
	r.Record(rel, StatusComplete, "")
	return nil
}

// WriteFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path, so a reader never sees half a file, whatever
// interrupts the writer.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Status says what an artifact is.
type Status string

// Artifact and run statuses.
const (
	StatusComplete Status = "complete"
	StatusPartial  Status = "partial" // present, but holds less than asked for
	StatusSkipped  Status = "skipped" // not made, on purpose
	StatusMissing  Status = "missing" // not made, because something failed
	StatusFailed   Status = "failed"  // (run) nothing usable
)

// Artifact is one manifest entry.
type Artifact struct {
	Path   string `json:"path"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
}

// Manifest lists every artifact of a run and what became of the run.
type Manifest struct {
	RunID    string `json:"run_id"`
	Status   Status `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Started  string `json:"started,omitempty"`
	Finished string `json:"finished,omitempty"`
	// Rebuilt is when deepprof report last remade the derived files.
	Rebuilt   string     `json:"rebuilt,omitempty"`
	Notes     []string   `json:"notes,omitempty"`
	Steps     []StepTime `json:"steps,omitempty"`
	Artifacts []Artifact `json:"artifacts"`
}

// StepTime is how long one program of the session ran, and how it ended.
type StepTime struct {
	Name     string  `json:"name"`
	Seconds  float64 `json:"seconds"`
	ExitCode int     `json:"exit_code"`
	// Stopped says why the session stopped the program before it ended by
	// itself; absent when it was not stopped.
	Stopped Stop `json:"stopped,omitempty"`
}

// Stop is why the session stopped a step.
type Stop string

// Why a step was stopped.
const (
	StopInterrupted Stop = "interrupted" // the session was interrupted (Ctrl-C)
	StopTimedOut    Stop = "timed_out"   // the step reached its deadline
)

// RecordStep adds a step's wall time to the manifest, in the order run.
func (r *Run) RecordStep(name string, seconds float64, exitCode int) {
	r.RecordStepTime(StepTime{Name: name, Seconds: seconds, ExitCode: exitCode})
}

// RecordStepTime adds a step's record to the manifest, in the order run.
func (r *Run) RecordStepTime(st StepTime) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Steps = append(r.manifest.Steps, st)
}

// Record sets an artifact's status; a later record of the same path
// replaces the earlier one.
func (r *Run) Record(rel string, st Status, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := Artifact{Path: rel, Status: st, Reason: reason}
	if fi, err := os.Stat(r.Path(rel)); err == nil && !fi.IsDir() {
		a.Bytes = fi.Size()
	}
	for i := range r.manifest.Artifacts {
		if r.manifest.Artifacts[i].Path == rel {
			r.manifest.Artifacts[i] = a
			return
		}
	}
	r.manifest.Artifacts = append(r.manifest.Artifacts, a)
}

// Note adds a line to the manifest's notes (what the session decided, such
// as using an ncu timing pass for lack of nsys).
func (r *Run) Note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Notes = append(r.manifest.Notes, fmt.Sprintf(format, args...))
}

// MarkPartial marks the whole run partial, keeping the first reason.
func (r *Run) MarkPartial(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest.Status == StatusComplete {
		r.manifest.Status, r.manifest.Reason = StatusPartial, reason
	}
}

// MarkFailed marks the whole run failed.
func (r *Run) MarkFailed(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Status, r.manifest.Reason = StatusFailed, reason
}

// Manifest returns a copy of the manifest, artifacts sorted by path.
func (r *Run) Manifest() Manifest {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.manifest
	m.Artifacts = slices.Clone(m.Artifacts)
	m.Notes = slices.Clone(m.Notes)
	m.Steps = slices.Clone(m.Steps)
	slices.SortFunc(m.Artifacts, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// WriteManifest writes manifest.json (atomically), stamping finished.
func (r *Run) WriteManifest(now time.Time) error {
	r.mu.Lock()
	r.manifest.Finished = now.UTC().Format(time.RFC3339)
	r.mu.Unlock()
	return r.writeManifest()
}

// WriteRebuiltManifest writes manifest.json after deepprof report remade
// the derived files: it stamps rebuilt and keeps the session's own
// started and finished times (finished is stamped only when the session
// never wrote it).
func (r *Run) WriteRebuiltManifest(now time.Time) error {
	r.mu.Lock()
	t := now.UTC().Format(time.RFC3339)
	r.manifest.Rebuilt = t
	if r.manifest.Finished == "" {
		r.manifest.Finished = t
	}
	r.mu.Unlock()
	return r.writeManifest()
}

func (r *Run) writeManifest() error {
	m := r.Manifest()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(r.Path(ManifestJSON), append(b, '\n'))
}
