package render

// TraceGzipAt is TraceGzip at another gzip level, for the benchmark that
// chose TraceGzipLevel.
var TraceGzipAt = traceGzip
