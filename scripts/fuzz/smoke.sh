#!/usr/bin/env bash
# smoke.sh [DURATION]: run every fuzzer for DURATION (default 3s), one after
# another; stops at the first that fails and prints what it said (the
# failing input is kept under the package's testdata/fuzz, the way to rerun
# it is in the output).
set -euo pipefail
cd "$(dirname "$0")/../.."
time=${1:-3s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
scripts/fuzz/list.sh | while read -r pkg name; do
  echo "fuzz $pkg $name ($time)"
  if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -fuzzminimizetime 1s >"$log" 2>&1; then
    echo "fuzz $pkg $name FAILED:"
    tail -n 60 "$log"
    exit 1
  fi
done
