#!/usr/bin/env bash
# run-all.sh BIN DURATION LOGS: run every fuzzer built by build.sh at once,
# each for DURATION from its package folder (seeds read from the
# repository), one log per fuzzer in LOGS; prints each one's last lines.
# $FUZZCACHE keeps the corpora (default LOGS/cache): a second run goes on
# from the first.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=$(cd "${1:?usage: run-all.sh BIN DURATION LOGS}" && pwd)
time=${2:?duration}
logs=$(mkdir -p "${3:?logs}" && cd "$3" && pwd)
root=$(pwd)
while read -r b dir name; do
  (cd "$root/$dir" && "$bin/$b" -test.run '^$' -test.fuzz "^${name}\$" -test.fuzztime "$time" \
     -test.fuzzminimizetime 10s -test.parallel 1 -test.fuzzcachedir "${FUZZCACHE:-$logs/cache}/$name" > "$logs/$name.log" 2>&1
   echo "$name exit $?" >> "$logs/$name.log") &
done < "$bin/fuzzers.txt"
wait
for f in "$logs"/*.log; do echo "== $(basename "$f")"; grep -v '^fuzz: elapsed' "$f" | tail -4; grep '^fuzz: elapsed' "$f" | tail -1; done
