package timeline

// Demangled is demangled, for the external tests.
var Demangled = demangled
