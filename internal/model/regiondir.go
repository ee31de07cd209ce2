// How names that come from a profiled program become safe folder names
// inside a run directory (RegionDir).

package model

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// MaxDirLen is the longest directory name RegionDir returns, in bytes.
const MaxDirLen = 80

// Lengths of the parts of a directory name: a stem, "-" and a hash of the
// region name, then on a collision "-" and a counter.
const (
	maxStem    = 64
	hashLen    = 8
	maxCounter = MaxDirLen - maxStem - 1 - hashLen - 1 // digits left for the counter
)

// RegionDir returns the directory name, relative to ncu/regions/, for the
// region called name, and records it in taken. Names come from the profiled
// program, so the result is built to be safe anywhere:
//
//   - it holds only a-z 0-9 '.' '_' '-': upper case is lowered (so that
//     names differing only in case cannot meet on a case-insensitive
//     filesystem), every other byte ('/', '\', NUL, spaces, non-ASCII)
//     becomes '_', runs of '_' collapse, and leading '.' '_' '-' and trailing
//     '.' are dropped (trailing '_' '-' too when a hash follows), so it is
//     never "", "." or "..";
//   - when that changed the name, or the stem is a Windows device name
//     (con, nul, com1...) or one of deepprof's own names there (report.*,
//     kernels.*, process-*), or the name had to be cut to 64 bytes, "-" and
//     the first 8 hex digits of the SHA-256 of the whole name follow, so that
//     names that sanitize alike still differ;
//   - if the result is already in taken (compared in lower case), "-2",
//     "-3"... is added until it is not: distinct calls with one taken map
//     always get distinct directories;
//   - it is at most MaxDirLen (80) bytes.
//
// The same names given in the same order give the same directories.
func RegionDir(name string, taken map[string]bool) string {
	stem, lossy := sanitize(name)
	if len(stem) > maxStem {
		stem = stem[:maxStem]
		lossy = true
	}
	if lossy {
		// A hash follows: end the stem on a letter or digit.
		stem = strings.TrimRight(stem, "._-")
	}
	if stem == "" {
		stem = "region"
		lossy = true
	}
	if reserved(stem) {
		lossy = true
	}
	dir := stem
	if lossy {
		sum := sha256.Sum256([]byte(name))
		dir = stem + "-" + hex.EncodeToString(sum[:])[:hashLen]
	}
	if taken[dir] {
		for i := 2; ; i++ {
			c := dir + "-" + strconv.Itoa(i)
			if len(strconv.Itoa(i)) > maxCounter {
				// Unreachable in practice (a million collisions): fall back
				// to hashing the counter in.
				sum := sha256.Sum256([]byte(name + "\x00" + strconv.Itoa(i)))
				c = "region-" + hex.EncodeToString(sum[:])[:hashLen*2]
			}
			if !taken[c] {
				dir = c
				break
			}
		}
	}
	if taken != nil {
		taken[dir] = true
	}
	return dir
}

// sanitize maps name to the safe alphabet; lossy reports whether anything
// was changed.
func sanitize(name string) (string, bool) {
	var b strings.Builder
	b.Grow(min(len(name), maxStem+8))
	lossy := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '-':
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
			lossy = true
		case c == '_':
			if s := b.String(); len(s) > 0 && s[len(s)-1] == '_' {
				lossy = true
				continue
			}
			b.WriteByte(c)
		default:
			lossy = true
			if s := b.String(); len(s) > 0 && s[len(s)-1] == '_' {
				continue
			}
			b.WriteByte('_')
		}
	}
	s := b.String()
	t := strings.TrimRight(strings.TrimLeft(s, "._-"), ".")
	if t != s {
		lossy = true
	}
	return t, lossy
}

// reserved reports whether a stem is a Windows device name (before any dot).
func reserved(stem string) bool {
	base, _, _ := strings.Cut(stem, ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	case "report", "kernels":
		// deepprof's own files beside and inside the region folders
		// (report.md, report.json, kernels.md, kernels.json).
		return true
	}
	if strings.HasPrefix(stem, "process-") {
		return true // a scope's folder inside a region's (process-N-device-D)
	}
	if len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	return false
}
