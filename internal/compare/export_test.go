package compare

// The readers of a run's files, for the round trips of fuzz_test.go (package
// compare_test: they go through package render's writers, which import this
// package).
var (
	ReadKernels        = (*Summary).readKernels
	ReadRegions        = (*Summary).readRegions
	ReadSummaryStages  = (*Summary).readSummaryStages
	ReadSummaryRegions = readSummaryRegions
	ReadMFU            = readMFU
)
