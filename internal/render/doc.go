// Package report renders typed results (kernel tables, region reports) as
// Markdown and JSON. It does no parsing and no aggregation; everything it
// prints comes from the values it is given. Names that come from a profiled
// program (kernel names, NVTX ranges) are escaped, never trusted as markup.
package render
