package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/llm-perf-opt/deepprof/internal/synth"
)

func main() {
	size := flag.String("size", "256MiB", "at least this many bytes (suffixes KiB, MiB, GiB)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: synth [-size N] RAW_PAGE.csv > OUT.csv")
		os.Exit(2)
	}
	n, err := parseSize(*size)
	if err == nil {
		err = write(flag.Arg(0), n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "synth:", err)
		os.Exit(1)
	}
}

func write(path string, n int64) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	r, err := synth.RepeatRows(page, n)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	return w.Flush()
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("-size %q: want a positive number with an optional KiB, MiB or GiB suffix", s)
	}
	return v * mult, nil
}
