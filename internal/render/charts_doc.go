// The SVG charts (Bars, Roofline): what they show of the strings they are
// given, and how a test counts what was drawn.
//
// The same input gives byte-identical output: charts carry no ids, dates or
// random names, and fonts are not embedded (the text is set in Liberation
// Sans, named by family, so a viewer without it falls back to another sans
// font; the layout was measured with Liberation's metrics). A chart of 20 bars
// is about 12 KB, a roofline of 10 points about 16 KB.
//
// Every string shown (titles, units, labels) is data from a profiled program
// and is treated as such: characters XML 1.0 cannot carry and invalid UTF-8
// become U+FFFD, control characters (newlines, tabs) become spaces, the backend
// escapes < > & " ', and long strings are cut with an ellipsis ("…") to
// MaxBarLabel, MaxPointLabel or MaxTitle runes. The chart stays well-formed
// XML whatever the label holds.
//
// Inspect parses a chart as XML and counts this package's bars and markers.
// The backend (vgsvg) cannot attach ids or classes to shapes, so each kind of
// shape is filled with a colour used for nothing else in any chart: bars are
// the <path> elements whose style says fill:#1F77B4, roofline markers the
// <path> elements whose style says fill:#D62728. Nothing else is filled with
// those colours (no legend shows a bar or a marker), and text, whatever it
// holds, is character data that the XML parser never takes for a <path> or a
// style attribute. Bars and Roofline run Inspect on every chart before
// returning it, and turn a panic inside gonum/plot into an error.

package render
