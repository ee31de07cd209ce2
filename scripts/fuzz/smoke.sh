#!/usr/bin/env bash
# smoke.sh [DURATION]: run every fuzzer for DURATION (default 3s), one after
# another; stops at the first that fails and prints what it said (the
# failing input is kept under the package's testdata/fuzz, the way to rerun
# it is in the output).
#
# Go 1.26's fuzzing coordinator can end a run that found nothing with a
# bare "context deadline exceeded" when -fuzztime expires while a worker is
# busy (go.dev/issue/75804, fixed in Go 1.27): no input is written and the
# run is otherwise clean. Such a run is tried once more; a second bare
# deadline is reported as that race and does not fail the smoke. Any other
# failure, and every one that writes a failing input, does.
set -euo pipefail
cd "$(dirname "$0")/../.."
time=${1:-3s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# deadlineRace: the log is the coordinator's race and nothing else.
deadlineRace() {
  grep -q 'context deadline exceeded' "$log" &&
    ! grep -q -e 'Failing input written' -e 'panic:' -e '_test.go:[0-9]*:' "$log"
}

scripts/fuzz/list.sh | while read -r pkg name; do
  echo "fuzz $pkg $name ($time)"
  for try in 1 2; do
    if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -fuzzminimizetime 1s >"$log" 2>&1; then
      break
    fi
    if deadlineRace; then
      if [ "$try" = 1 ]; then
        echo "fuzz $pkg $name: a bare 'context deadline exceeded' (go.dev/issue/75804): once more"
        continue
      fi
      echo "fuzz $pkg $name: the deadline race again, no failing input: not a finding (go.dev/issue/75804)"
      break
    fi
    echo "fuzz $pkg $name FAILED:"
    tail -n 60 "$log"
    exit 1
  done
done
