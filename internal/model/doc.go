// Package nvtx is the one place that knows how NVTX ranges are named: the
// Range type (a domain and a range name), the range path that region reports
// write and configuration reads back (Path, ParsePath), and the spellings of
// the tools: one entry of ncu's push/pop stack column (ParseNcuEntry), ncu's
// --nvtx-include expressions (IncludeExpr, Include), nsys's --nvtx-capture
// value (NsysCapture, CheckNsysCapture) and the Range column of nsys's
// nvtx_sum (ParseNsysRange).
//
// It is not for reading whole exports (package ncu reads the stack column's
// cells and package nsys its stats CSVs), nor for aggregating or rendering.
//
// # Range paths
//
// A stack of ranges is written, outermost first, as its levels joined by
// '/'. A level in the default domain is its name; a level in a named domain
// is "Domain@name". Inside a level, '\' escapes the next character: a '/' in
// a name is written `\/`, a '\' is written `\\`, and an '@' in a
// default-domain name (or in a domain name) is written `\@`, so that the
// default-domain range literally named "LLM@decode_all" ("LLM\@decode_all")
// and range "decode_all" of domain "LLM" ("LLM@decode_all") keep distinct
// names. An '@' after the first one of a level is part of the name. So
// ParsePath(Path(levels)) gives levels back for every stack whose names are
// not empty; ParsePath reads a '\' before any other character as itself.
//
// The same path is what nvtx.include takes (Include): levels written without
// a domain take the configured default domain (nvtx.domain). NVTX keeps one
// push/pop stack per domain, so one ncu expression names ranges of one
// domain: a path that mixes domains (prefill/CCCL@cub::DeviceScan::InclusiveScan)
// is a region deepprof reports but not a filter ncu can take.
package model
