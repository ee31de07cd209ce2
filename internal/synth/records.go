package synth

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// EditRecords applies fn to the lines (without their newlines) of every
// CUPTI record file of a copied run (timeline/cupti/cupti-*.tsv[.gz], gzip
// kept as it was): a SYNTHETIC recording, made from a real one at test time.
func EditRecords(label string, fn func(lines []string) []string) Edit {
	return Edit{Label: label, Apply: func(dir string) error {
		files, err := filepath.Glob(filepath.Join(dir, "timeline", "cupti", "cupti-*.tsv*"))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if strings.HasSuffix(f, ".gz") {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					return err
				}
				if b, err = io.ReadAll(zr); err != nil {
					return err
				}
			}
			lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if err := writeRecords(f, []byte(strings.Join(fn(lines), "\n")+"\n")); err != nil {
				return err
			}
		}
		return nil
	}}
}

// LinkRecords replaces every CUPTI record file of a copied run by a
// symbolic link to a copy of it outside the run.
func LinkRecords() Edit {
	return Edit{Label: "records-linked", Apply: func(dir string) error {
		files, err := filepath.Glob(filepath.Join(dir, "timeline", "cupti", "cupti-*.tsv*"))
		if err != nil {
			return err
		}
		for _, f := range files {
			outside := filepath.Join(filepath.Dir(dir), "outside-"+filepath.Base(f))
			if err := os.Rename(f, outside); err != nil {
				return err
			}
			if err := os.Symlink(outside, f); err != nil {
				return err
			}
		}
		return nil
	}}
}

// LinkRecordsDir moves a copied run's folder of CUPTI record files out of
// the run and puts a symbolic link to it in its place.
func LinkRecordsDir() Edit {
	return Edit{Label: "records-dir-linked", Apply: func(dir string) error {
		in := filepath.Join(dir, "timeline", "cupti")
		outside := filepath.Join(filepath.Dir(dir), "outside-cupti-"+filepath.Base(dir))
		if err := os.Rename(in, outside); err != nil {
			return err
		}
		return os.Symlink(outside, in)
	}}
}

// GunzipRecords stores every gzipped CUPTI record file of a copied run
// plain, as a user who unpacked a recorded run would.
func GunzipRecords() Edit {
	return Edit{Label: "records-gunzipped", Apply: func(dir string) error {
		files, err := filepath.Glob(filepath.Join(dir, "timeline", "cupti", "cupti-*.tsv.gz"))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return err
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(strings.TrimSuffix(f, ".gz"), plain, 0o644); err != nil {
				return err
			}
			if err := os.Remove(f); err != nil {
				return err
			}
		}
		return nil
	}}
}

// EmptyRecords makes every CUPTI record file of a copied run empty (no
// byte, gzipped where it was): what a process killed before its first
// flush leaves.
func EmptyRecords() Edit {
	return Edit{Label: "records-empty", Apply: func(dir string) error {
		files, err := filepath.Glob(filepath.Join(dir, "timeline", "cupti", "cupti-*.tsv*"))
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := writeRecords(f, nil); err != nil {
				return err
			}
		}
		return nil
	}}
}

// writeRecords writes out as the record file f, gzipped when its name
// says so.
func writeRecords(f string, out []byte) error {
	if strings.HasSuffix(f, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(out); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
		out = z.Bytes()
	}
	return os.WriteFile(f, out, 0o644)
}

// StripNVTX is EditRecords leaving out every NVTX record (N lines), the
// end line counting the records kept: the same program had it opened no
// range (WithoutNVTX, on a copied run).
func StripNVTX() Edit {
	return EditRecords("no-nvtx", func(lines []string) []string {
		rec := []byte(strings.Join(lines, "\n") + "\n")
		return strings.Split(strings.TrimSuffix(string(WithoutNVTX(rec)), "\n"), "\n")
	})
}
