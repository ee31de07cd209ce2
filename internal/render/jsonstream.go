package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// jsonStream writes one JSON document a part at a time, in the bytes a
// json.Encoder with a two-space indent and no HTML escaping writes for
// the whole: a value's long arrays are written element by element, so
// that neither the document nor its compact form is ever held whole.
type jsonStream struct {
	w   *bufio.Writer
	buf bytes.Buffer
	enc *json.Encoder
}

func newJSONStream(w io.Writer) *jsonStream {
	j := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	j.enc = json.NewEncoder(&j.buf)
	j.enc.SetEscapeHTML(false)
	return j
}

// encode is v as it reads at nesting level (its lines after the first
// indented level steps more), without a final newline. The bytes are
// valid until the next call.
func (j *jsonStream) encode(v any, level int) ([]byte, error) {
	j.buf.Reset()
	j.enc.SetIndent(strings.Repeat("  ", level), "  ")
	if err := j.enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(j.buf.Bytes(), []byte("\n")), nil
}

// value writes v at nesting level.
func (j *jsonStream) value(v any, level int) error {
	b, err := j.encode(v, level)
	if err != nil {
		return err
	}
	_, err = j.w.Write(b)
	return err
}

// field is a field of an object whose value a jsonStream writes itself:
// the object is encoded with the field null (a nil slice), and fill
// writes the field's value where that null stands.
type field struct {
	key  string
	fill func() error
}

// object writes v, an object at nesting level whose fields are encoded
// with the fields' keys null, with each of fields (in the order the
// object lists them) written by its fill. A null at a field's key is
// found by its line: a newline is never inside a JSON string, so the
// newline, the indent of level+1 and the key mark the object's own field.
func (j *jsonStream) object(v any, level int, fields ...field) error {
	b, err := j.encode(v, level)
	if err != nil {
		return err
	}
	rest := bytes.Clone(b) // fill encodes again
	indent := "\n" + strings.Repeat("  ", level+1)
	for _, f := range fields {
		key := indent + `"` + f.key + `": `
		i := bytes.Index(rest, []byte(key+"null"))
		if i < 0 {
			return fmt.Errorf("json: field %q is not null at level %d", f.key, level+1)
		}
		if _, err := j.w.Write(rest[:i+len(key)]); err != nil {
			return err
		}
		if err := f.fill(); err != nil {
			return err
		}
		rest = rest[i+len(key)+len("null"):]
	}
	_, err = j.w.Write(rest)
	return err
}

// array writes an array of n elements held at nesting level (the level
// of the key that holds it), each written by elem at level+1: null when
// isNil, [] when empty.
func (j *jsonStream) array(n int, isNil bool, level int, elem func(i int) error) error {
	switch {
	case isNil:
		_, err := j.w.WriteString("null")
		return err
	case n == 0:
		_, err := j.w.WriteString("[]")
		return err
	}
	j.w.WriteByte('[')
	for i := range n {
		if i > 0 {
			j.w.WriteByte(',')
		}
		j.w.WriteString("\n" + strings.Repeat("  ", level+1))
		if err := elem(i); err != nil {
			return err
		}
	}
	_, err := j.w.WriteString("\n" + strings.Repeat("  ", level) + "]")
	return err
}

// end ends the document with the encoder's newline and flushes it.
func (j *jsonStream) end() error {
	j.w.WriteByte('\n')
	return j.w.Flush()
}
