// The one table of unit spellings that ncu and nsys write, and values
// converted to base units at parse time (see the package documentation).

package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dimension names what a unit measures.
type Dimension string

// The dimensions met in ncu and nsys exports.
const (
	Time      Dimension = "time"
	Bytes     Dimension = "bytes"
	Frequency Dimension = "frequency"
	Percent   Dimension = "percent"
	Cycles    Dimension = "cycles"
	Count     Dimension = "count"
	// Rate is any compound unit num/den (byte/second, inst/cycle, %/byte ...).
	Rate Dimension = "rate"
	// Unitless is the empty unit: a plain number.
	Unitless Dimension = "unitless"
	// Unknown is a spelling not in the table; values pass through unscaled.
	Unknown Dimension = "unknown"
)

// Scale converts a value written in one unit spelling to its base unit.
type Scale struct {
	Spelling string    // the unit as written, e.g. "Kbyte", "usecond", "Gbyte/s"
	Base     string    // the base unit, e.g. "byte", "ns", "byte/second"
	Factor   float64   // base = written * Factor
	Dim      Dimension // what it measures
	Known    bool      // false when Spelling is not in the table
}

type simple struct {
	base   string
	factor float64
	dim    Dimension
}

// table is every simple unit spelling, without SI prefixes for the count-like
// units (see prefixed). Time has its own spellings because ncu writes both
// "us" and "usecond" depending on the page and version.
var table = map[string]simple{
	"":        {"", 1, Unitless},
	"ns":      {"ns", 1, Time},
	"nsecond": {"ns", 1, Time},
	"us":      {"ns", 1e3, Time},
	"usecond": {"ns", 1e3, Time},
	"ms":      {"ns", 1e6, Time},
	"msecond": {"ns", 1e6, Time},
	"s":       {"ns", 1e9, Time},
	"second":  {"ns", 1e9, Time},
	"%":       {"%", 1, Percent},
	"cycle":   {"cycle", 1, Cycles},
	"cycles":  {"cycle", 1, Cycles},
	"byte":    {"byte", 1, Bytes},
	"bytes":   {"byte", 1, Bytes},
	"hz":      {"hz", 1, Frequency},
	"Hz":      {"hz", 1, Frequency},
}

// countUnits are units of things counted; they take SI prefixes (Kinst, Msector).
var countUnits = map[string]bool{
	"inst": true, "sector": true, "sectors": true, "request": true, "warp": true,
	"thread": true, "block": true, "register": true, "SM": true, "cluster": true,
	"pass": true, "branches": true, "sample": true, "wavefront": true, "instance": true,
	"bank": true, "fiber": true, "launch": true, "cta": true, "transaction": true,
	"sm": true, "tpc": true, "txn": true, "op": true, "flop": true, "FLOP": true,
}

// prefixes are the SI prefixes ncu puts before byte, hz and counts. ncu scales
// bytes by powers of 1000 (launch__shared_mem_config_size: 32.768 Kbyte in the
// default page is 32,768 byte with --print-units base; see the H200 fixture).
var prefixes = map[string]float64{"K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}

// overrides are compound spellings whose conversion ncu does differently from
// num/den arithmetic. Each is taken from a recorded pair of pages of one report.
var overrides = map[string]Scale{
	// derived__pct_occupancy_per_shared_mem_size: 1.591 %/Kbyte on the default
	// page is 1,591 %/byte on the --print-units base page (H200 fixture).
	"%/Kbyte": {Spelling: "%/Kbyte", Base: "%/byte", Factor: 1e3, Dim: Rate, Known: true},
}

// Lookup returns the Scale for a unit spelling. An unknown spelling returns a
// Scale with Known false, Factor 1 and Base equal to the spelling.
func Lookup(spelling string) Scale {
	if s, ok := overrides[spelling]; ok {
		return s
	}
	if s, ok := lookupSimple(spelling); ok {
		return s
	}
	if num, den, ok := strings.Cut(spelling, "/"); ok && !strings.Contains(den, "/") {
		n, ok1 := lookupSimple(num)
		d, ok2 := lookupSimple(den)
		if ok1 && ok2 && num != "" && den != "" {
			// A time denominator is written "/s" in rates, whose base is per second.
			dbase, dfactor := d.Base, d.Factor
			if d.Dim == Time {
				dbase, dfactor = "second", d.Factor/1e9
			}
			return Scale{Spelling: spelling, Base: n.Base + "/" + dbase, Factor: n.Factor / dfactor, Dim: Rate, Known: true}
		}
	}
	return Scale{Spelling: spelling, Base: spelling, Factor: 1, Dim: Unknown}
}

func lookupSimple(spelling string) (Scale, bool) {
	if u, ok := table[spelling]; ok {
		return Scale{Spelling: spelling, Base: u.base, Factor: u.factor, Dim: u.dim, Known: true}, true
	}
	if countUnits[spelling] {
		return Scale{Spelling: spelling, Base: spelling, Factor: 1, Dim: Count, Known: true}, true
	}
	if len(spelling) > 1 {
		if f, ok := prefixes[spelling[:1]]; ok {
			rest := spelling[1:]
			switch {
			case rest == "byte" || rest == "bytes":
				return Scale{Spelling: spelling, Base: "byte", Factor: f, Dim: Bytes, Known: true}, true
			case rest == "hz" || rest == "Hz":
				return Scale{Spelling: spelling, Base: "hz", Factor: f, Dim: Frequency, Known: true}, true
			case rest == "cycle" || rest == "cycles":
				return Scale{Spelling: spelling, Base: "cycle", Factor: f, Dim: Cycles, Known: true}, true
			case countUnits[rest]:
				return Scale{Spelling: spelling, Base: rest, Factor: f, Dim: Count, Known: true}, true
			}
		}
	}
	return Scale{}, false
}

// Value is one number as read from an export.
type Value struct {
	Base     float64 // the value in the base unit (meaningless when !Valid)
	Unit     string  // the base unit
	Orig     string  // the text as written, e.g. "1,399" or "n/a"
	OrigUnit string  // the unit as written, e.g. "usecond"
	Valid    bool    // false for "n/a" and empty cells
}

// ErrNotNumber is returned (wrapped) for text that is not a number.
var ErrNotNumber = errors.New("not a number")

// Parse reads text written in this Scale's unit. "n/a" and "" give a Value
// with Valid false and no error; anything else that is not a number is an
// error that quotes the text.
func (s Scale) Parse(text string) (Value, error) {
	v := Value{Unit: s.Base, Orig: text, OrigUnit: s.Spelling}
	if text == "" || text == "n/a" {
		return v, nil
	}
	f, err := ParseNumber(text)
	if err != nil {
		return v, err
	}
	if f < 0 && (s.Dim == Time || s.Dim == Bytes || s.Dim == Cycles) {
		return v, fmt.Errorf("%q %s is negative: a %s cannot be", text, s.Spelling, dimNoun(s.Dim))
	}
	v.Base = f * s.Factor
	if math.IsInf(v.Base, 0) {
		return v, fmt.Errorf("%q %s is out of range", text, s.Spelling)
	}
	v.Valid = true
	return v, nil
}

// Parse is Lookup(unit).Parse(text).
func Parse(text, unit string) (Value, error) { return Lookup(unit).Parse(text) }

// ParseNumber reads a number as ncu writes it: optional sign, digits with
// thousands separators ("3,141,141,141.14"), a fraction, an exponent.
// Separators must group digits by three.
//
// Only decimal notation is a number: Go's other spellings ("NaN", "Inf",
// hexadecimal "0x1p20", underscores) are not what ncu writes, and a value
// that overflows (1e999) is out of range; both are errors.
func ParseNumber(text string) (float64, error) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == ',' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, fmt.Errorf("%q is %w (decimal notation only)", text, ErrNotNumber)
		}
	}
	if strings.IndexByte(text, ',') < 0 {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is %w", text, ErrNotNumber)
		}
		return f, nil
	}
	var buf [64]byte
	clean, ok := stripSeparators(buf[:0], text)
	if !ok {
		return 0, fmt.Errorf("%q is %w (misplaced thousands separator)", text, ErrNotNumber)
	}
	f, err := strconv.ParseFloat(string(clean), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is %w", text, ErrNotNumber)
	}
	return f, nil
}

// stripSeparators removes thousands separators from the integer part,
// checking that they group by three.
func stripSeparators(dst []byte, text string) ([]byte, bool) {
	i := 0
	if i < len(text) && (text[i] == '-' || text[i] == '+') {
		dst = append(dst, text[i])
		i++
	}
	end := i
	for end < len(text) && (text[end] >= '0' && text[end] <= '9' || text[end] == ',') {
		end++
	}
	intPart := text[i:end]
	groups := strings.Split(intPart, ",")
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return nil, false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return nil, false
		}
	}
	for _, g := range groups {
		dst = append(dst, g...)
	}
	if strings.IndexByte(text[end:], ',') >= 0 {
		return nil, false
	}
	return append(dst, text[end:]...), true
}

// dimNoun names a dimension in an error.
func dimNoun(d Dimension) string {
	switch d {
	case Time:
		return "duration"
	case Bytes:
		return "byte count"
	case Cycles:
		return "cycle count"
	}
	return "value"
}
