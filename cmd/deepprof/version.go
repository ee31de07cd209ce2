package main

import (
	"runtime/debug"
	"strings"
)

// version is what deepprof --version prints: the module's version and the
// VCS revision it was built from (the build info Go records), or what of
// them the build did not record.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "deepprof (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := []string{"deepprof " + v}
	var rev, modified, when string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		case "vcs.time":
			when = s.Value
		}
	}
	if rev != "" {
		r := "revision " + rev
		if modified == "true" {
			r += " (modified)"
		}
		if when != "" {
			r += " of " + when
		}
		out = append(out, r)
	}
	out = append(out, bi.GoVersion)
	return strings.Join(out, ", ")
}
