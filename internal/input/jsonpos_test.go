package input

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestOffsetAndLine(t *testing.T) {
	for _, c := range []struct {
		doc  string
		line int
	}{
		{"{\n\"a\": 1,\n\"b\": x}", 3}, // syntax error on line 3
		{"{\n\"a\": \"text\"\n}", 2},   // type error: a wants an int
		{"{\"a\": 1}\n\n\n{", 4},       // Unmarshal sees trailing data
	} {
		var v struct{ A int }
		err := json.Unmarshal([]byte(c.doc), &v)
		off, ok := Offset(err)
		if !ok {
			t.Errorf("%q: no offset in %v", c.doc, err)
			continue
		}
		if got := Line([]byte(c.doc), off); got != c.line {
			t.Errorf("%q: line %d, want %d (%v)", c.doc, got, c.line, err)
		}
	}
	if _, ok := Offset(errors.New("other")); ok {
		t.Error("an error that is not encoding/json's has no offset")
	}
	if Line([]byte("a\nb"), 99) != 2 || Line(nil, -1) != 1 {
		t.Error("offsets outside the data are clamped")
	}
}
