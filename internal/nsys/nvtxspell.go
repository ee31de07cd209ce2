package nsys

import (
	"errors"
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/model"
)

// CaptureRange returns nsys's --nvtx-capture value for one range: "name" in
// the default domain, "name@Domain" in a named one. nsys's syntax is NOT
// ncu's: its forms are "range@domain, range, range@*" (`nsys profile
// --help`), the domain after the range, whereas ncu's --nvtx-include writes
// it first ("LLM@decode_all/"): given to nsys, "LLM@decode_all" means range
// LLM of domain decode_all. No escape for an '@' is known in nsys's syntax,
// so a name or domain that holds one is an error, as is an empty name.
func CaptureRange(r model.Range) (string, error) {
	if r.Name == "" {
		return "", errors.New("nsys capture range: no range name")
	}
	if strings.Contains(r.Name, "@") || strings.Contains(r.Domain, "@") {
		return "", fmt.Errorf("nsys capture range %s: nsys's --nvtx-capture (range@domain) has no way known to us to write an '@' that is part of a name", model.Path([]model.Range{r}))
	}
	if r.Domain == "" {
		return r.Name, nil
	}
	return r.Name + "@" + r.Domain, nil
}

// CheckCaptureRange rejects the --nvtx-capture values that make a capture
// silently empty: none, ncu's syntax (a trailing '/'), an '@' with no range
// before it or no domain after it ("range@*" is any domain).
func CheckCaptureRange(s string) error {
	if s == "" {
		return errors.New("no range: the capture needs the range that starts it")
	}
	if strings.HasSuffix(s, "/") {
		return fmt.Errorf("%q ends in '/': that is ncu's --nvtx-include syntax; nsys takes range, range@domain or range@*", s)
	}
	rng, domain, hasDomain := strings.Cut(s, "@")
	if rng == "" {
		return fmt.Errorf("%q has no range name before '@' (nsys syntax is range@domain)", s)
	}
	if hasDomain && domain == "" {
		return fmt.Errorf("%q has no domain after '@' (use the range alone for the default domain, or range@* for any)", s)
	}
	return nil
}

// ParseRange reads the model.Range column of `nsys stats --report nvtx_sum`:
// "Domain:name", the default domain written as nothing before the ':'
// (":decode_step"; seen in published nvtx_sum outputs, e.g. "PushPop
// :step"). The name is everything after the first ':', so it keeps its own
// colons. A value with no ':' at all is read as a default-domain name. An
// empty name is an error.
func ParseRange(s string) (model.Range, error) {
	domain, name, ok := strings.Cut(s, ":")
	if !ok {
		domain, name = "", s
	}
	if name == "" {
		return model.Range{}, fmt.Errorf("NVTX range %q has no name", s)
	}
	return model.Range{Domain: domain, Name: name}, nil
}
