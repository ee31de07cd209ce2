package kernels

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/facts"
	"github.com/llm-perf-opt/deepprof/internal/model"
)

// severityRank orders severities, the most pressing first.
func severityRank(s string) int {
	switch s {
	case "ERR":
		return 0
	case "WRN":
		return 1
	case "OPT":
		return 2
	case "INF":
		return 4
	}
	return 3
}

// Actionable says whether the rule points at something to change: an
// optimization opportunity, warning or error with an estimated gain.
func Actionable(r facts.Rule) bool {
	return r.Severity != "INF" && r.SpeedupPct != nil && *r.SpeedupPct > 0
}

type ruleKey struct{ kernel, rule, section string }

type ruleAcc struct {
	severity, speedupType string
	launches              int
	weighted              float64 // Σ duration × speedup
	estimated             bool
	best                  float64
	desc                  string
}

// RuleAccumulator gathers rules per kernel from launches; it is a
// model.Handler, so one read of a details page can feed it beside others.
type RuleAccumulator struct {
	accs     map[ruleKey]*ruleAcc
	launches map[string]int     // profiled launches per kernel
	durNS    map[string]float64 // their summed duration
}

// NewRuleAccumulator returns an empty RuleAccumulator.
func NewRuleAccumulator() *RuleAccumulator {
	return &RuleAccumulator{accs: map[ruleKey]*ruleAcc{}, launches: map[string]int{}, durNS: map[string]float64{}}
}

// Launch adds one launch's rule rows. A speedup that is not a finite,
// non-negative number is an error at the launch's line.
func (a *RuleAccumulator) Launch(x *model.Export, l *model.Launch) error {
	dur := 0.0
	if l.Duration.Valid && l.Duration.Base > 0 {
		dur = l.Duration.Base
	}
	a.launches[l.Kernel]++
	a.durNS[l.Kernel] += dur
	seen := map[ruleKey]bool{}
	for _, r := range l.Rules {
		k := ruleKey{l.Kernel, r.Name, r.Section}
		c := a.accs[k]
		if c == nil {
			c = &ruleAcc{severity: r.Type, speedupType: r.SpeedupType, best: -1}
			a.accs[k] = c
		}
		if severityRank(r.Type) < severityRank(c.severity) {
			c.severity = r.Type
		}
		if !seen[k] {
			seen[k] = true
			c.launches++
		}
		sp := 0.0
		if t := strings.TrimSpace(r.Speedup); t != "" {
			v, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", ""), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || strings.ContainsAny(t, "xXpP") {
				return &model.SyntaxError{File: x.Source, Line: l.Line, Msg: fmt.Sprintf("launch %d: rule %s: estimated speedup %q is not a percentage", l.ID, r.Name, r.Speedup)}
			}
			sp, c.estimated = min(v, 100), true
			c.weighted += dur * sp
		}
		if sp > c.best {
			c.best, c.desc = sp, r.Description
			if r.SpeedupType != "" {
				c.speedupType = r.SpeedupType
			}
		}
	}
	return nil
}

// Rules is every kernel's rules, by kernel name, each kernel's ordered by
// estimated speedup (largest first), then severity, then name.
func (a *RuleAccumulator) Rules() map[string][]facts.Rule {
	out := map[string][]facts.Rule{}
	for k, c := range a.accs {
		r := facts.Rule{Name: k.rule, Section: k.section, Severity: c.severity, Launches: c.launches, Of: a.launches[k.kernel],
			Advice: OneLine(c.desc), Description: c.desc}
		if c.estimated {
			r.SpeedupType = c.speedupType
			v := 0.0
			if d := a.durNS[k.kernel]; d > 0 {
				v = c.weighted / d
			} else {
				v = max(c.best, 0) // launches of zero duration: the largest estimate is all there is
			}
			v = math.Round(v*1000) / 1000
			r.SpeedupPct = &v
		}
		out[k.kernel] = append(out[k.kernel], r)
	}
	for _, rs := range out {
		slices.SortFunc(rs, compare)
	}
	return out
}

func speedup(r facts.Rule) float64 {
	if r.SpeedupPct == nil {
		return -1
	}
	return *r.SpeedupPct
}

func compare(a, b facts.Rule) int {
	if c := cmp.Compare(speedup(b), speedup(a)); c != 0 {
		return c
	}
	if c := cmp.Compare(severityRank(a.Severity), severityRank(b.Severity)); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Section, b.Section))
}

// RulesFromReader reads every launch of a details page into rules per kernel.
// The first malformed row ends the read with its positioned error.
func RulesFromReader(r model.Launches, source string) (map[string][]facts.Rule, error) {
	a := NewRuleAccumulator()
	if err := r.Feed(source, a)[0]; err != nil {
		return nil, err
	}
	return a.Rules(), nil
}

var (
	sentenceEnd = regexp.MustCompile(`[.!?](\s+|$)`)
	link        = regexp.MustCompile(`\s*\(https?://[^)\s]*\)`)
)

// maxAdvice is the longest one-line advice, in characters.
const maxAdvice = 240

// OneLine is ncu's rule text cut to one line: its sentences up to
// maxAdvice characters, without the ones that only point at the
// documentation, links left out.
func OneLine(desc string) string {
	desc = strings.Join(strings.Fields(desc), " ")
	var out []string
	n := 0
	for _, s := range sentences(desc) {
		if strings.HasPrefix(s, "See the ") || strings.HasPrefix(s, "Check the ") && strings.Contains(s, "for more details") {
			continue
		}
		s = link.ReplaceAllString(s, "")
		if len(out) > 0 && n+1+len(s) > maxAdvice {
			break
		}
		out = append(out, s)
		n += len(s) + 1
	}
	line := strings.Join(out, " ")
	if len(line) > maxAdvice {
		cut := strings.LastIndexByte(line[:maxAdvice-1], ' ')
		if cut < maxAdvice/2 {
			cut = maxAdvice - 1
		}
		for cut > 0 && !utf8Start(line[cut]) {
			cut--
		}
		line = line[:cut] + "…"
	}
	return line
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// sentences splits text after each '.', '!' or '?' that ends a sentence
// (followed by a space or the end), so "0.0 full waves" stays whole.
func sentences(text string) []string {
	var out []string
	for text != "" {
		loc := sentenceEnd.FindStringIndex(text)
		if loc == nil {
			out = append(out, strings.TrimSpace(text))
			break
		}
		out = append(out, strings.TrimSpace(text[:loc[0]+1]))
		text = text[loc[1]:]
	}
	return out
}
