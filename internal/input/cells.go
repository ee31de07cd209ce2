package input

import "github.com/mattn/go-runewidth"

// cells measures text in a terminal's display cells: an East Asian wide
// rune counts two, a combining mark none, whatever the locale (an
// ambiguous-width rune such as "…" counts one), so that output does not
// depend on the environment it is made in. go-runewidth holds Unicode's
// width tables (UAX #11) and grapheme clusters.
var cells = &runewidth.Condition{StrictEmojiNeutral: true}

// Width is s's width in display cells.
func Width(s string) int { return cells.StringWidth(s) }

// Truncate cuts s to at most w display cells, ending it with tail when
// cut.
func Truncate(s string, w int, tail string) string { return cells.Truncate(s, w, tail) }

// TruncateStart cuts s from its start to at most w display cells: its
// end is kept.
func TruncateStart(s string, w int) string { return cells.TruncatePrefix(s, w, "") }
