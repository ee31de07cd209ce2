#!/usr/bin/env bash
# build.sh OUT: build each package's fuzzers as an instrumented test binary
# (go test -c -fuzz) into OUT, with OUT/fuzzers.txt listing "BINARY PKGDIR
# NAME", for a machine with more cores and no Go toolchain (run-all.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: build.sh OUT}
mkdir -p "$out"
: > "$out/fuzzers.txt"
scripts/fuzz/list.sh | while read -r pkg name; do
  bin=$(echo "${pkg#./}" | tr / -).test
  [ -e "$out/$bin" ] || go test -c -ldflags="-s -w" -fuzz "^${name}\$" -o "$out/$bin" "$pkg"
  echo "$bin ${pkg#./} $name" >> "$out/fuzzers.txt"
done
