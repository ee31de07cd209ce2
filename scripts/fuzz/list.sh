#!/usr/bin/env bash
# list.sh: every fuzzer of the module, one "PACKAGE NAME" per line.
set -euo pipefail
cd "$(dirname "$0")/../.."
git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | while read -r f; do
  pkg=./$(dirname "$f")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r name; do
    echo "$pkg $name"
  done
done | sort
