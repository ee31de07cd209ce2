package machine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Version is a tool's version: "2025.3.1.0" is Major 2025, Minor 3, Patch 1,
// Build 0. Raw is the version text as printed, with what follows it on its
// line (ncu's "(build 36398880) (public-release)", nsys's
// "-245134619542v0"), for provenance.
type Version struct {
	Major, Minor, Patch, Build int
	Raw                        string
}

// String writes the four numbers, "2025.3.1.0".
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d.%d", v.Major, v.Minor, v.Patch, v.Build)
}

// Less orders versions by Major, Minor, Patch, then Build; Raw is ignored.
func (v Version) Less(w Version) bool {
	a := [4]int{v.Major, v.Minor, v.Patch, v.Build}
	b := [4]int{w.Major, w.Minor, w.Patch, w.Build}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// IsZero reports whether v was never set (a Tool not yet probed).
func (v Version) IsZero() bool { return v == Version{} }

const numbers = `(\d+)\.(\d+)(?:\.(\d+))?(?:\.(\d+))?`

var (
	// ncu: "Version 2025.3.1.0 (build 36398880) (public-release)" on a line of its own.
	ncuVersion = regexp.MustCompile(`(?m)^[ \t]*Version[ \t]+(` + numbers + `\b[^\r\n]*)`)
	// nsys: "NVIDIA Nsight Systems version 2024.5.1.113-245134619542v0".
	nsysVersion = regexp.MustCompile(`Nsight Systems version[ \t]+(` + numbers + `[^\s]*)`)
)

// ParseNcuVersion reads the output of "ncu --version":
//
//	NVIDIA (R) Nsight Compute Command Line Profiler
//	Copyright (c) 2018-2025 NVIDIA Corporation
//	Version 2025.3.1.0 (build 36398880) (public-release)
func ParseNcuVersion(out string) (Version, error) {
	m := ncuVersion.FindStringSubmatch(out)
	if m == nil {
		return Version{}, fmt.Errorf("ncu --version: no line \"Version YYYY.N.N.N\" in %q", clip(out))
	}
	return version(m)
}

// ParseNsysVersion reads the output of "nsys --version":
//
//	NVIDIA Nsight Systems version 2025.3.2.474-253236389321v0
func ParseNsysVersion(out string) (Version, error) {
	m := nsysVersion.FindStringSubmatch(out)
	if m == nil {
		return Version{}, fmt.Errorf("nsys --version: no \"NVIDIA Nsight Systems version YYYY.N.N\" in %q", clip(out))
	}
	return version(m)
}

// version builds a Version from a match of numbers: m[1] the raw text, m[2:6]
// the numbers (the last two optional).
func version(m []string) (Version, error) {
	var n [4]int
	for i, s := range m[2:6] {
		if s == "" {
			continue
		}
		x, err := strconv.Atoi(s)
		if err != nil {
			return Version{}, fmt.Errorf("version %q: number %q out of range", m[1], s)
		}
		n[i] = x
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], Build: n[3], Raw: strings.TrimSpace(m[1])}, nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	const max = 300
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}
