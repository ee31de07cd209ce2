// Where in a JSON document encoding/json's error is.

package input

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Offset is the byte offset a syntax or type error of encoding/json points
// at; false for any other error.
func Offset(err error) (int64, bool) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return se.Offset, true
	case errors.As(err, &te):
		return te.Offset, true
	}
	return 0, false
}

// Line is the 1-based line of data that byte offset off falls on (offsets
// past either end are clamped).
func Line(data []byte, off int64) int {
	return 1 + bytes.Count(data[:min(max(off, 0), int64(len(data)))], []byte{'\n'})
}
