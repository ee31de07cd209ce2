package model

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSyntaxErrorIs: two readers that refuse one line give equal errors,
// which errors.Is takes for one; another line, or another problem, is
// another error.
func TestSyntaxErrorIs(t *testing.T) {
	a := &SyntaxError{File: "ncu/raw.csv", Line: 3, Msg: "launch 1 has no duration"}
	b := &SyntaxError{File: "ncu/raw.csv", Line: 3, Msg: "launch 1 has no duration"}
	assert.ErrorIs(t, fmt.Errorf("regions: %w", b), a)
	assert.NotErrorIs(t, a, &SyntaxError{File: "ncu/raw.csv", Line: 4, Msg: "launch 1 has no duration"})
	assert.NotErrorIs(t, a, &SyntaxError{File: "ncu/raw.csv", Line: 3, Msg: "launch 1: Device \"x\""})
	assert.NotErrorIs(t, a, errors.New(a.Error()), "an error of the same words is not the same error")
	assert.NotErrorIs(t, a, (*SyntaxError)(nil))
}
