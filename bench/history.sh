#!/usr/bin/env bash
# Times `atlas-reproduce history` over synthetic census releases: the
# default census (229,539 tools), then each next release made by
# `synth --next-of` with EDITS seeded edits, run a month apart; then
# `history` into fresh datasets of the first 6, 12 and all N releases, the
# same runs again (nothing to write), and the last release added to a
# dataset of the others. Prints wall, user and system time and peak RSS
# (GNU time) for each. Usage: bench/history.sh [DIR] (default
# bench-data/history); N (24), EDITS (500) and BIN (bin/atlas-reproduce)
# from the environment. The releases are kept in DIR for a second pass.
set -euo pipefail

BIN=${BIN:-bin/atlas-reproduce}
DIR=${1:-bench-data/history}
N=${N:-24}
EDITS=${EDITS:-500}
TIME=/usr/bin/time

mkdir -p "$DIR/runs"
date_of() { date -u -d "2026-11-01 +$1 month" +%F; }

# The releases: data-i is made from data-(i-1), then run; data folders
# are removed once the next one is made from them.
for ((i = 0; i < N; i++)); do
	run=$(printf '%s/runs/r%02d' "$DIR" "$i")
	[ -f "$run/report.json" ] && continue
	data=$(printf '%s/data-%02d' "$DIR" "$i")
	if ((i == 0)); then
		"$BIN" synth --out "$data" --progress=false
	else
		prev=$(printf '%s/data-%02d' "$DIR" $((i - 1)))
		"$BIN" synth --next-of "$prev" --out "$data" --edits "$EDITS" --seed "$i"
		rm -rf "$prev"
	fi
	"$BIN" run --data "$data" --sha256sums "$data/SHA256SUMS" --out "$run" \
		--release-date "$(date_of "$i")" --progress=false
done

runs=()
for ((i = 0; i < N; i++)); do runs+=("$(printf '%s/runs/r%02d' "$DIR" "$i")"); done

measure() {
	local what=$1
	shift
	printf '%-44s ' "$what"
	"$TIME" -f '%e s wall, %U s user, %S s sys, %M KB peak RSS' "$BIN" history "$@" 2>&1 >/dev/null | tail -1
}

grep -m1 'model name' /proc/cpuinfo
echo "load average before: $(cat /proc/loadavg)"
for n in 6 12 "$N"; do
	rm -rf "$DIR/ds$n"
	measure "history of $n releases (new dataset)" --out "$DIR/ds$n" "${runs[@]:0:n}"
done
measure "the same $N again (nothing written)" --out "$DIR/ds$N" "${runs[@]}"
rm -rf "$DIR/ds-add"
"$BIN" history --out "$DIR/ds-add" "${runs[@]:0:N-1}" 2>/dev/null
measure "release $N added to $((N - 1))" --out "$DIR/ds-add" "${runs[N - 1]}"
echo "load average after: $(cat /proc/loadavg)"
