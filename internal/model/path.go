package model

import (
	"fmt"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
)

// Range is one NVTX push/pop range: its domain ("" for the default domain)
// and its name (facts.Range).
type Range = facts.Range

// Path writes a stack of ranges, outermost first, as region reports name it
// (facts.Path): the levels (Range.String) joined by '/'. No levels give "".
func Path(levels []Range) string { return facts.Path(levels) }

// ParsePath reads a range path written as Path writes it (see the package
// documentation): "decode_all/decode_step", "LLM@decode_all/LLM@decode_step",
// `LLM\@decode_all` (the default-domain range named LLM@decode_all). An empty
// path, an empty level, or an '@' with no domain before it is an error.
func ParsePath(p string) ([]Range, error) {
	if p == "" {
		return nil, fmt.Errorf("range path is empty")
	}
	var (
		levels []Range
		cur    strings.Builder
		domain string
		named  bool // an unescaped '@' was seen in this level
	)
	end := func() error {
		n := len(levels) + 1
		if named && domain == "" {
			return fmt.Errorf("range path %q: level %d has an '@' with no domain before it (an '@' in a default-domain name is written \\@)", p, n)
		}
		if cur.Len() == 0 {
			return fmt.Errorf("range path %q: level %d has no range name", p, n)
		}
		levels = append(levels, Range{Domain: domain, Name: cur.String()})
		cur.Reset()
		domain, named = "", false
		return nil
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p) && strings.IndexByte(`\/@`, p[i+1]) >= 0:
			i++
			cur.WriteByte(p[i])
		case c == '/':
			if err := end(); err != nil {
				return nil, err
			}
		case c == '@' && !named:
			domain, named = cur.String(), true
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if err := end(); err != nil {
		return nil, err
	}
	return levels, nil
}

// Configured reads a range path as the configuration gives it (nvtx.include,
// nvtx.exclude): ParsePath, then each level written without a domain is put
// in domain (the configured nvtx.domain; "" is the default domain).
func Configured(path, domain string) ([]Range, error) {
	levels, err := ParsePath(path)
	if err != nil {
		return nil, err
	}
	for i := range levels {
		if levels[i].Domain == "" {
			levels[i].Domain = domain
		}
	}
	return levels, nil
}

// MaxRangeDepth is the deepest NVTX nesting deepprof reports range by
// range: a launch in ranges nested deeper counts in its level-MaxRangeDepth
// range, and reports say how many did.
const MaxRangeDepth = 32
