package input

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNoDuplicateKeys (issue 53): a key given twice in one object is
// refused at its line with its path; the same key in two objects, or in
// arrays, is not a duplicate; a syntax error is left to the decoder. SYNTHETIC documents.
func TestNoDuplicateKeys(t *testing.T) {
	assert.NoError(t, NoDuplicateKeys([]byte(`{"a": {"k": 1}, "b": {"k": 2}, "rows": [{"k": 1}, {"k": 2}]}`), "s.json"))
	assert.EqualError(t, NoDuplicateKeys([]byte("{\n\"kernels\": {\"rows\": [1]},\n\"kernels\": {}\n}"), "s.json"),
		`s.json:3: key "kernels" is given twice: deepprof writes each once`)
	assert.EqualError(t, NoDuplicateKeys([]byte("{\"stages\": {\"rows\": [{\"name\": \"a\",\n\"name\": \"b\"}]}}"), "s.json"),
		`s.json:2: key "stages.rows[0].name" is given twice: deepprof writes each once`)
	assert.NoError(t, NoDuplicateKeys([]byte("{\"a\": [1,,2]}"), "s.json"), "a syntax error is the decoder's to report")
	assert.NoError(t, NoDuplicateKeys([]byte("{\"a\": "), "s.json"))
	deep := make([]byte, 0, 2*(maxJSONDepth+10))
	for range maxJSONDepth + 5 {
		deep = append(deep, '[')
	}
	assert.ErrorContains(t, NoDuplicateKeys(deep, "s.json"), "nested deeper than 512 levels")
}
