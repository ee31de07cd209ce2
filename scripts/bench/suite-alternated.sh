#!/usr/bin/env bash
# suite-alternated.sh: go test -count=1 ./... of two commits of this
# repository, alternated on one machine, after one warm-up run of each.
#
#   scripts/bench/suite-alternated.sh BASE HEAD [ROUNDS]
#
# Each commit is checked out into a fresh clone under a temporary folder;
# each round runs BASE then HEAD and prints the wall seconds and the user
# and system CPU seconds (GNU time) of each. Issue 37 compares HEAD with
# a0bf1cf this way (docs/measurements.md).
set -euo pipefail
base=${1:?usage: suite-alternated.sh BASE HEAD [ROUNDS]}
head=${2:?usage: suite-alternated.sh BASE HEAD [ROUNDS]}
rounds=${3:-2}
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for rev in "$base" "$head"; do
	git clone -q "$repo" "$work/$rev"
	git -C "$work/$rev" checkout -q "$rev"
	(cd "$work/$rev" && go test -count=1 ./... >/dev/null 2>&1 || true)
done
for round in $(seq "$rounds"); do
	for rev in "$base" "$head"; do
		start=$(date +%s.%N)
		(cd "$work/$rev" && /usr/bin/time -f "%U %S" -o "$work/time" go test -count=1 ./... >"$work/out" 2>&1) ||
			{ echo "$rev: go test failed:"; tail -20 "$work/out"; exit 1; }
		end=$(date +%s.%N)
		read -r user sys <"$work/time"
		printf '%s round %d: wall %.1f s, user %.1f s, system %.1f s\n' "$rev" "$round" "$(echo "$end - $start" | bc)" "$user" "$sys"
	done
done
