package model

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	cases := []struct {
		spelling string
		base     string
		factor   float64
		dim      Dimension
	}{
		// Time.
		{"ns", "ns", 1, Time},
		{"nsecond", "ns", 1, Time},
		{"us", "ns", 1e3, Time},
		{"usecond", "ns", 1e3, Time},
		{"ms", "ns", 1e6, Time},
		{"msecond", "ns", 1e6, Time},
		{"s", "ns", 1e9, Time},
		{"second", "ns", 1e9, Time},
		// Sizes: ncu's prefixes are powers of 1000.
		{"byte", "byte", 1, Bytes},
		{"Kbyte", "byte", 1e3, Bytes},
		{"Mbyte", "byte", 1e6, Bytes},
		{"Gbyte", "byte", 1e9, Bytes},
		// Rates: a time denominator becomes per second.
		{"Gbyte/s", "byte/second", 1e9, Rate},
		{"Mbyte/s", "byte/second", 1e6, Rate},
		{"byte/s", "byte/second", 1, Rate},
		{"sector/us", "sector/second", 1e6, Rate},
		{"sector/ns", "sector/second", 1e9, Rate},
		{"sector/s", "sector/second", 1, Rate},
		{"inst/cycle", "inst/cycle", 1, Rate},
		{"sector/cycle", "sector/cycle", 1, Rate},
		{"byte/cycle", "byte/cycle", 1, Rate},
		{"Kbyte/cycle", "byte/cycle", 1e3, Rate},
		{"byte/sector", "byte/sector", 1, Rate},
		{"Kbyte/block", "byte/block", 1e3, Rate},
		{"byte/block", "byte/block", 1, Rate},
		{"register/thread", "register/thread", 1, Rate},
		{"%/register", "%/register", 1, Rate},
		{"%/byte", "%/byte", 1, Rate},
		{"%/Kbyte", "%/byte", 1e3, Rate},
		// Percent, cycles, frequency.
		{"%", "%", 1, Percent},
		{"cycle", "cycle", 1, Cycles},
		{"Ghz", "hz", 1e9, Frequency},
		{"Mhz", "hz", 1e6, Frequency},
		{"hz", "hz", 1, Frequency},
		// Counts.
		{"warp", "warp", 1, Count},
		{"SM", "SM", 1, Count},
		{"block", "block", 1, Count},
		{"thread", "thread", 1, Count},
		{"cluster", "cluster", 1, Count},
		{"inst", "inst", 1, Count},
		{"sector", "sector", 1, Count},
		{"sectors", "sectors", 1, Count},
		{"request", "request", 1, Count},
		{"branches", "branches", 1, Count},
		{"pass", "pass", 1, Count},
		{"sample", "sample", 1, Count},
		{"Kinst", "inst", 1e3, Count},
		// A plain number.
		{"", "", 1, Unitless},
	}
	for _, tc := range cases {
		t.Run(tc.spelling, func(t *testing.T) {
			s := Lookup(tc.spelling)
			assert.True(t, s.Known)
			assert.Equal(t, tc.spelling, s.Spelling)
			assert.Equal(t, tc.base, s.Base)
			assert.Equal(t, tc.dim, s.Dim)
			assert.InEpsilon(t, tc.factor, s.Factor, 1e-12)

			v, err := s.Parse("2.5")
			require.NoError(t, err)
			assert.True(t, v.Valid)
			assert.InEpsilon(t, 2.5*tc.factor, v.Base, 1e-12)
			assert.Equal(t, tc.base, v.Unit)
			assert.Equal(t, "2.5", v.Orig)
			assert.Equal(t, tc.spelling, v.OrigUnit)
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, u := range []string{"furlong", "furlong/fortnight", "byte/s/s", "Xbyte", "/s", "byte/", "K"} {
		t.Run(u, func(t *testing.T) {
			s := Lookup(u)
			assert.False(t, s.Known)
			assert.Equal(t, Unknown, s.Dim)
			assert.Equal(t, u, s.Spelling)
			assert.Equal(t, u, s.Base)
			assert.Equal(t, 1.0, s.Factor)
			// Values pass through unscaled.
			v, err := Parse("1,234.5", u)
			require.NoError(t, err)
			assert.True(t, v.Valid)
			assert.Equal(t, 1234.5, v.Base)
			assert.Equal(t, u, v.Unit)
			assert.Equal(t, u, v.OrigUnit)
		})
	}
}

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"0", 0},
		{"1,399", 1399},
		{"3,141,141,141.14", 3141141141.14},
		{"9,096.60", 9096.6},
		{"-1,234.5", -1234.5},
		{"+1,234", 1234},
		{"999,999", 999999},
		{"1e3", 1000},
		{"1,000e3", 1e6},
		{"0.000000", 0},
		{"12.5", 12.5},
		{"-0.25", -0.25},
	} {
		got, err := ParseNumber(tc.in)
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
	for _, in := range []string{
		"1,39", "12,34,567", "abc", "1,2a", "1,2345", "1234,567", ",123", "1,234,", "1,,234",
		"1.234,5", "-,123", "", " 1", "1 ", "n/a",
	} {
		_, err := ParseNumber(in)
		if assert.Error(t, err, in) {
			assert.ErrorIs(t, err, ErrNotNumber, in)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", in), in)
		}
	}
}

func TestParseInvalid(t *testing.T) {
	for _, unit := range []string{"us", "", "furlong"} {
		for _, text := range []string{"n/a", ""} {
			v, err := Parse(text, unit)
			require.NoError(t, err)
			assert.False(t, v.Valid, "%q %q", text, unit)
			assert.Equal(t, text, v.Orig)
			assert.Equal(t, unit, v.OrigUnit)
			assert.Equal(t, Lookup(unit).Base, v.Unit)
		}
		v, err := Parse("1,39", unit)
		assert.ErrorIs(t, err, ErrNotNumber)
		assert.False(t, v.Valid)
	}
	v, err := Lookup("usecond").Parse("9,096.60")
	require.NoError(t, err)
	assert.Equal(t, Value{Base: 9096.6e3, Unit: "ns", Orig: "9,096.60", OrigUnit: "usecond", Valid: true}, v)
}

// halfLastDigit is half a unit in the last digit written in text (a number as
// ParseNumber reads it), in text's own unit.
func halfLastDigit(text string) float64 {
	mant, exp := text, 0
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		mant = text[:i]
		fmt.Sscan(text[i+1:], &exp)
	}
	dec := 0
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		dec = len(mant) - i - 1
	}
	return 0.5 * math.Pow(10, float64(exp-dec))
}

// readPage reads one raw page: header, units row, then one row per launch.
func readPage(t *testing.T, path string) (header, unitRow []string, rows [][]string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	all, err := r.ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(all), 2, path)
	return all[0], all[1], all[2:]
}

// The two raw pages of one report, one with ncu's default units and one with
// --print-units base, must give the same base values for every numeric cell:
// this checks the unit table against ncu's own conversions.
func TestDefaultAndBasePagesAgree(t *testing.T) {
	const dir = "../../fixtures/ncu/h200-llama-decode-basic/"
	hd, ud, rd := readPage(t, dir+"raw.csv")
	hb, ub, rb := readPage(t, dir+"raw-units-base.csv")
	require.Equal(t, hd, hb, "both pages have the same columns")
	require.Len(t, ud, len(hd))
	require.Len(t, ub, len(hb))
	require.Equal(t, len(rd), len(rb), "one row per launch on both pages")
	require.Equal(t, "", ud[0], "row 1 is the units row")

	type pair struct{ def, base string }
	covered := map[pair]int{} // cells compared, by unit pair
	// One Scale per column, as readers use them.
	sds, sbs := make([]Scale, len(hd)), make([]Scale, len(hd))
	for c := range hd {
		sds[c], sbs[c] = Lookup(ud[c]), Lookup(ub[c])
	}
	checked := make([]bool, len(hd))
	for i := range rd {
		require.Len(t, rd[i], len(hd), "row %d", i+2)
		require.Len(t, rb[i], len(hd), "row %d", i+2)
		require.Equal(t, rd[i][0], rb[i][0], "row %d: launches in the same order", i+2)
		for c := range hd {
			vd, vb := rd[i][c], rb[i][c]
			sd, sb := sds[c], sbs[c]
			// Parse succeeds with a Valid value exactly where ParseNumber
			// succeeds: the cells numeric on both pages.
			pd, err1 := sd.Parse(vd)
			pb, err2 := sb.Parse(vb)
			if err1 != nil || err2 != nil || !pd.Valid || !pb.Valid {
				continue
			}
			if !checked[c] {
				require.True(t, sd.Known, "%s: unit %q", hd[c], ud[c])
				require.True(t, sb.Known, "%s: unit %q", hd[c], ub[c])
				require.Equal(t, sd.Base, sb.Base, "%s: %q and %q", hd[c], ud[c], ub[c])
				checked[c] = true
			}
			// Each page rounds for display on its own: the default page
			// writes 0.032037 % where the base page writes 0.03 %, and the
			// base page 3,141,141,141.14 hz where the default one writes
			// 3.141141 Ghz. So both pages' last digits bound the difference.
			tol := 1e-6*math.Max(math.Abs(pd.Base), math.Abs(pb.Base)) +
				halfLastDigit(vd)*sd.Factor + halfLastDigit(vb)*sb.Factor
			if math.Abs(pd.Base-pb.Base) > tol {
				t.Errorf("row %d %s: %s %s = %g %s, but the base page has %s %s = %g %s",
					i+2, hd[c], vd, ud[c], pd.Base, pd.Unit, vb, ub[c], pb.Base, pb.Unit)
			}
			covered[pair{ud[c], ub[c]}]++
		}
	}
	var names []string
	for p, n := range covered {
		names = append(names, fmt.Sprintf("%q -> %q (%d cells)", p.def, p.base, n))
	}
	sort.Strings(names)
	t.Logf("unit pairs covered:\n  %s", strings.Join(names, "\n  "))
	// Every unit that differs between the pages was compared.
	for _, p := range []pair{
		{"us", "ns"}, {"Ghz", "hz"}, {"Kbyte", "byte"}, {"Mbyte", "byte"}, {"Gbyte", "byte"},
		{"Kbyte/block", "byte/block"}, {"%/Kbyte", "%/byte"},
	} {
		assert.Positive(t, covered[p], "pair %v not compared", p)
	}
	for c := range hd {
		if ud[c] != ub[c] {
			assert.Contains(t, covered, pair{ud[c], ub[c]}, "column %s", hd[c])
		}
	}
}

// ncu derives every X.per_second metric as X / gpu__time_duration.sum, and
// writes it in whatever rate unit reads best (sector/ns, sector/us, Gbyte/s,
// Mhz ...). Dividing the two other columns of the same row checks the rate
// spellings, which no --print-units base page in the fixtures covers.
func TestPerSecondColumnsAgree(t *testing.T) {
	pages, err := filepath.Glob("../../fixtures/ncu/*/raw*.csv")
	require.NoError(t, err)
	covered := map[string]int{} // cells compared, by rate unit
	for _, page := range pages {
		f, err := os.Open(page)
		require.NoError(t, err)
		r := csv.NewReader(f)
		r.FieldsPerRecord = -1
		r.LazyQuotes = true // NVTX names with undoubled quotes
		all, err := r.ReadAll()
		f.Close()
		require.NoError(t, err, page)
		// Some pages start with ncu's own log lines.
		for len(all) > 0 && (len(all[0]) == 0 || all[0][0] != "ID") {
			all = all[1:]
		}
		if len(all) < 3 {
			continue
		}
		header, unitRow := all[0], all[1]
		col := map[string]int{}
		for i, h := range header {
			col[h] = i
		}
		durIdx, ok := col["gpu__time_duration.sum"]
		if !ok {
			continue
		}
		type rateCol struct {
			name   string
			ri, xi int
		}
		var rates []rateCol
		for ri, name := range header {
			if xname, ok := strings.CutSuffix(name, ".per_second"); ok {
				if xi, ok := col[xname]; ok {
					rates = append(rates, rateCol{name, ri, xi})
				}
			}
		}
		for _, row := range all[2:] {
			if len(row) != len(header) {
				continue // a cut row of a crashed run
			}
			dur, err := Lookup(unitRow[durIdx]).Parse(row[durIdx])
			if err != nil || !dur.Valid || dur.Base == 0 {
				continue
			}
			require.Equal(t, "ns", dur.Unit)
			dsec := dur.Base * 1e-9
			for _, rc := range rates {
				name, ri, xi := rc.name, rc.ri, rc.xi
				xname := header[xi]
				sr, sx := Lookup(unitRow[ri]), Lookup(unitRow[xi])
				rate, err1 := sr.Parse(row[ri])
				x, err2 := sx.Parse(row[xi])
				if err1 != nil || err2 != nil || !rate.Valid || !x.Valid {
					continue
				}
				require.True(t, sr.Known, "%s: unit %q", name, unitRow[ri])
				require.True(t, sx.Known, "%s: unit %q", xname, unitRow[xi])
				wantUnit := map[string]string{"": "", "cycle": "hz"}[x.Unit]
				if wantUnit == "" && x.Unit != "" {
					wantUnit = x.Unit + "/second"
				}
				require.Equal(t, wantUnit, rate.Unit, "%s: %q against %s in %q", name, unitRow[ri], xname, unitRow[xi])
				want := x.Base / dsec
				tol := halfLastDigit(row[xi])*sx.Factor/dsec +
					math.Abs(x.Base)*halfLastDigit(row[durIdx])*Lookup(unitRow[durIdx]).Factor*1e-9/(dsec*dsec) +
					halfLastDigit(row[ri])*sr.Factor + 1e-6*math.Abs(want)
				if math.Abs(rate.Base-want) > tol {
					t.Errorf("%s: %s %s %s = %g, but %s %s / %s %s = %g",
						page, name, row[ri], unitRow[ri], rate.Base, row[xi], unitRow[xi], row[durIdx], unitRow[durIdx], want)
				}
				covered[unitRow[ri]]++
			}
		}
	}
	var names []string
	for u, n := range covered {
		names = append(names, fmt.Sprintf("%q (%d cells)", u, n))
	}
	sort.Strings(names)
	t.Logf("rate units covered:\n  %s", strings.Join(names, "\n  "))
	for _, u := range []string{"Gbyte/s", "Mbyte/s", "byte/s", "sector/ns", "sector/us", "sector/s", "Ghz", "Mhz", "hz"} {
		assert.Positive(t, covered[u], "rate unit %q not compared", u)
	}
}

// Issue 16: numbers that are not decimal, not finite or, for a duration, a
// byte count or a cycle count, negative are errors that quote the text.
func TestParseRefusesWhatNcuNeverWrites(t *testing.T) {
	for _, c := range []struct{ text, unit, want string }{
		{"NaN", "ms", "decimal notation only"},
		{"Inf", "ms", "decimal notation only"},
		{"-Inf", "ns", "decimal notation only"},
		{"0x1p20", "ns", "decimal notation only"},
		{"1_000", "ns", "decimal notation only"},
		{"1e999", "ns", "not a number"},
		{"-4998.128", "ms", "is negative: a duration cannot be"},
		{"-1", "byte", "is negative: a byte count cannot be"},
		{"1e308", "s", "out of range"},
	} {
		_, err := Parse(c.text, c.unit)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"`+c.text+`"`) {
			t.Errorf("Parse(%q, %q) = %v, want an error with %q", c.text, c.unit, err, c.want)
		}
	}
	// What ncu writes still reads.
	for _, text := range []string{"3,141,141.14", "-0.5", "1.5e3", "+2", "0"} {
		if _, err := Parse(text, "%"); err != nil {
			t.Errorf("Parse(%q) = %v", text, err)
		}
	}
}
