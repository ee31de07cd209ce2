#!/usr/bin/env bash
# suite-alternated.sh: go test -count=1 ./... of two commits of this
# repository, alternated on one machine, after one warm-up run of each.
#
#   scripts/bench/suite-alternated.sh BASE HEAD [ROUNDS]
#
# Each commit is checked out into a fresh clone under a temporary folder.
# Rounds alternate their order (BASE then HEAD, then HEAD then BASE), so
# that a machine growing slower or faster weighs on both alike; each run
# prints its wall seconds and its user and system CPU seconds (GNU time).
# Issue 37 compares HEAD with a0bf1cf this way (docs/measurements.md).
set -euo pipefail
base=${1:?usage: suite-alternated.sh BASE HEAD [ROUNDS]}
head=${2:?usage: suite-alternated.sh BASE HEAD [ROUNDS]}
rounds=${3:-2}
[ -x /usr/bin/time ] || { echo "suite-alternated.sh: needs GNU time at /usr/bin/time (Debian: apt-get install time)" >&2; exit 1; }
repo=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A dir=([base]="$work/base" [head]="$work/head")
declare -A rev=([base]="$base" [head]="$head")
for k in base head; do
	git clone -q "$repo" "${dir[$k]}"
	git -C "${dir[$k]}" checkout -q "${rev[$k]}"
	(cd "${dir[$k]}" && go test -count=1 ./... >/dev/null 2>&1 || true)
done
for round in $(seq "$rounds"); do
	order="base head"
	if [ $((round % 2)) -eq 0 ]; then
		order="head base"
	fi
	for k in $order; do
		(cd "${dir[$k]}" && /usr/bin/time -f "%e %U %S" -o "$work/time" go test -count=1 ./... >"$work/out" 2>&1) ||
			{ echo "${rev[$k]}: go test failed:"; tail -20 "$work/out"; exit 1; }
		read -r wall user sys <"$work/time"
		echo "${rev[$k]} round $round: wall $wall s, user $user s, system $sys s"
	done
done
