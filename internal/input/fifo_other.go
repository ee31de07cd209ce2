//go:build !unix

package input

// FIFOForTest skips the test: named pipes are a Unix thing.
func FIFOForTest(t TB, path string) { t.Skip("no named pipes on this system") }
