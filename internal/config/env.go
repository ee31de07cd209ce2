package config

import (
	"flag"
	"os"
	"strings"
)

// EnvOverrides is the environment variable GPU tests read overrides from.
const EnvOverrides = "DEEPPROF_OVERRIDES"

// OverridesFromEnv returns the overrides in $DEEPPROF_OVERRIDES.
func OverridesFromEnv() []string {
	return SplitOverrides(os.Getenv(EnvOverrides))
}

// GoTestOverrides returns the overrides of a test run: those of
// $DEEPPROF_OVERRIDES, then the arguments after go test's -args (which win,
// coming later):
//
//	DEEPPROF_OVERRIDES='ncu=roofline workload.repeats=1' go test -tags gpu -run Stage2 ./...
//	go test -tags gpu -run Stage2 ./... -args ncu=roofline workload.repeats=1
//
// Call it from a test (flags are parsed by then).
func GoTestOverrides() []string {
	out := OverridesFromEnv()
	if flag.Parsed() {
		out = append(out, flag.Args()...)
	}
	return out
}

// SplitOverrides splits s at unquoted white space, as a shell would:
// 'single' and "double" quotes group (and are removed), and a backslash
// outside single quotes escapes the next character. So
//
//	ncu=roofline 'workload.argv=[python3, wl.py]'
//
// is two overrides.
func SplitOverrides(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if escaped {
		cur.WriteRune('\\') // a trailing backslash escapes nothing: it is itself
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
