package input

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// maxJSONDepth is how deep NoDuplicateKeys follows nested objects and
// arrays: far past any file deepprof writes, short of a stack a hostile
// file could exhaust.
const maxJSONDepth = 512

// NoDuplicateKeys is an error at the first object in data that names a
// key twice (name:line: the key's path); nil when every object's keys are
// distinct, and at a syntax error, which the caller's decoder reports in
// its own words. encoding/json keeps the last of
// two keys silently: a second "kernels" would empty a table, a second
// "stages" switch a comparison off.
func NoDuplicateKeys(data []byte, name string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := noDuplicates(dec, data, name, "", 0); err != nil && err != errSyntax {
		return err
	}
	return nil
}

func noDuplicates(dec *json.Decoder, data []byte, name, path string, depth int) error {
	off := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return errSyntax
	}
	if depth > maxJSONDepth {
		return fmt.Errorf("%s:%d: nested deeper than %d levels: not a file deepprof writes", name, Line(data, off), maxJSONDepth)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return errSyntax
			}
			key := k.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return fmt.Errorf("%s:%d: key %q is given twice: deepprof writes each once", name, Line(data, dec.InputOffset()), at)
			}
			seen[key] = true
			if err := noDuplicates(dec, data, name, at, depth+1); err != nil {
				return err
			}
		}
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := noDuplicates(dec, data, name, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return errSyntax
	}
	return nil
}

// errSyntax ends the walk at a syntax error, which NoDuplicateKeys leaves
// to the caller's decoder.
var errSyntax = errors.New("syntax")
