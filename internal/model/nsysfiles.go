package model

// The names nsys gives its outputs: a run directory's layout is made of
// them, and the nsys reader finds its files by them.

// Stats report names, as `nsys stats --report` takes them (2023.x and later;
// older versions called the kernel summary gpukernsum).
const (
	NsysReportKernSum = "cuda_gpu_kern_sum"
	NsysReportNVTXSum = "nvtx_sum"
)

// NsysStatsCSVPath is the file `nsys stats --format csv --output prefix`
// writes for one report: prefix_report.csv.
func NsysStatsCSVPath(prefix, report string) string { return prefix + "_" + report + ".csv" }

// Report file extensions: nsys 2021.4 and later write .nsys-rep, older
// versions .qdrep; .qdstrm is the raw stream nsys converts into either.
const (
	NsysExtReport    = ".nsys-rep"
	NsysExtOldReport = ".qdrep"
	NsysExtStream    = ".qdstrm"
)
