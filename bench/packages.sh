#!/usr/bin/env bash
# make bench-packages: the real npm servers of bench/packages.txt crawled
# one by one, cold (an empty package cache and store) and then warm (the
# same cache), as a normal user, each also installed in a throwaway folder
# and run directly with node for the tool list the TypeScript SDK's client
# gets. Writes OUT/measure.tsv and OUT/packages.md (docs/bench-packages.md
# says what each figure means). Then the census passes: the whole list in
# one crawl, cold, warm, next month's, and next month's with the records
# of unchanged installs reused. BENCH_PASSES=census runs those alone.
#
# usage: bench/packages.sh BIN OUT [LIST]
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
list=$(realpath "${3:-bench/packages.txt}")
here=$(cd "$(dirname "$0")" && pwd)
modules=$(cd "$here/../internal/testenv/npm" && pwd)/node_modules
if [ ! -d "$modules/@modelcontextprotocol/sdk" ]; then
  echo "bench-packages: the direct runs need the TypeScript SDK: (cd internal/testenv/npm && npm ci --ignore-scripts)" >&2
  exit 2
fi

# Root crawls as a normal user, as users do.
if [ "$(id -u)" -eq 0 ]; then
  user=${BENCH_USER:-atlas-ci}
  id "$user" >/dev/null 2>&1 || useradd -m "$user"
  as_user() { su "$user" -s /bin/bash -c "$1"; }
  # The user reads the list and the scripts, and runs the binary.
  for d in "$bin" "$list" "$here"; do
    d=$(dirname "$d")
    while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  done
else
  user=$(id -un)
  as_user() { bash -c "$1"; }
fi

# The CPU of every process the bench starts, sandboxed ones included (their
# PID namespace reaps them, so no rusage of ours sees them): this shell
# joins a cpuacct cgroup (v1) or a cgroup of its own (v2), and each step
# reads the difference.
cg=""
if [ "$(id -u)" -eq 0 ] && [ -w /sys/fs/cgroup/cpuacct ]; then
  cg=/sys/fs/cgroup/cpuacct/atlas-bench-$$
  mkdir "$cg"
  cpu_ns() { cat "$cg/cpuacct.usage"; }
  leave=/sys/fs/cgroup/cpuacct/cgroup.procs
elif [ -w /sys/fs/cgroup/cgroup.procs ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg=/sys/fs/cgroup/atlas-bench-$$
  mkdir "$cg"
  cpu_ns() { awk '/^usage_usec/ {printf "%d\n", $2 * 1000}' "$cg/cpu.stat"; }
  leave=/sys/fs/cgroup/cgroup.procs
else
  echo "bench-packages: no cgroup to join (run as root for the CPU figures); CPU is left out" >&2
  cpu_ns() { echo 0; }
fi
if [ -n "$cg" ]; then
  echo $$ >"$cg/cgroup.procs"
  trap 'echo $$ >"$leave"; rmdir "$cg" 2>/dev/null || true' EXIT
fi

rm -rf "$out"
mkdir -p "$out"/{cand,cold,warm,direct}
cache=$out/cache
mkdir -p "$cache"
chown -R "$user" "$out"
tsv=$out/measure.tsv
printf 'phase\tindex\tpackage\twall_s\tcpu_s\tfetched_bytes\tconnections\ttarballs\tcache_bytes\n' >"$tsv"

mapfile -t pkgs < <(grep -v '^[[:space:]]*\(#\|$\)' "$list")
echo "bench-packages: ${#pkgs[@]} packages, as $user, into $out" >&2

# step PHASE I PKG CMD: runs CMD as the user and appends its figures.
step() {
  local phase=$1 i=$2 pkg=$3 cmd=$4
  local t0 c0 t1 c1
  t0=$(date +%s.%N) c0=$(cpu_ns)
  as_user "$cmd" || true
  t1=$(date +%s.%N) c1=$(cpu_ns)
  local log=$out/$phase/$i.log fetched=0 conns=0 tarballs=0
  if [ -f "$log" ]; then
    fetched=$(grep -o 'fetched_bytes=[0-9]*' "$log" | cut -d= -f2 || true)
    conns=$(grep -o 'connections=[0-9]*' "$log" | cut -d= -f2 || true)
    tarballs=$(grep -o 'npm_tarballs=[0-9]*' "$log" | cut -d= -f2 || true)
  fi
  printf '%s\t%d\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\n' "$phase" "$i" "$pkg" \
    "$(awk "BEGIN {print $t1 - $t0}")" "$(awk "BEGIN {print ($c1 - $c0) / 1e9}")" \
    "${fetched:-0}" "${conns:-0}" "${tarballs:-0}" "$(du -sb "${measured_cache:-$cache}" | cut -f1)" >>"$tsv"
  tail -1 "$tsv" >&2
}

crawl() {
  local phase=$1 i=$2
  echo "$bin crawl --candidates '$out/cand/$i.txt' --out '$out/$phase/$i' --package-cache '$cache' --package-cache-max 34359738368 --npm-metadata-max-age 24h --no-elapsed --timeout 2m 2>'$out/$phase/$i.log'"
}

passes=${BENCH_PASSES:-all}
per_package=(cold warm)
if [ "$passes" = census ]; then
  per_package=()
fi
for phase in "${per_package[@]}"; do
  i=0
  for pkg in "${pkgs[@]}"; do
    i=$((i + 1))
    echo "$pkg" >"$out/cand/$i.txt"
    step "$phase" "$i" "$pkg" "$(crawl "$phase" "$i")"
  done
done

# The census passes: the whole list in one crawl, as a census runs it
# (the registry read as of the crawl's start, packages two at a time),
# into a cache of its own: cold (empty), warm (every package installed),
# next month's (the store kept, every tenth package's folder removed, so
# that it is resolved and laid out again: a changed package whose
# dependencies the store mostly holds; its own new tarball aside), and
# next month's again with another tenth removed and the records of the
# unchanged installs reused (--reuse-package-records).
census=$out/census-cache
mkdir -p "$census" "$out/census-cold" "$out/census-warm" "$out/census-next" "$out/census-reuse"
chown -R "$user" "$census" "$out/census-cold" "$out/census-warm" "$out/census-next" "$out/census-reuse"
grep -v '^[[:space:]]*\(#\|$\)' "$list" >"$out/cand/all.txt"
measured_cache=$census
for phase in census-cold census-warm census-next census-reuse; do
  flags=""
  case $phase in
  census-next) as_user "ls -d '$census'/npm-* | awk 'NR % 10 == 0' | xargs -r rm -rf" ;;
  census-reuse)
    as_user "ls -d '$census'/npm-* | awk 'NR % 10 == 5' | xargs -r rm -rf"
    flags=--reuse-package-records
    ;;
  esac
  step "$phase" 0 all "$bin crawl --candidates '$out/cand/all.txt' --out '$out/$phase/0' --package-cache '$census' --package-cache-max 34359738368 --no-elapsed --timeout 2m $flags 2>'$out/$phase/0.log'"
done
unset measured_cache

# The direct runs: npm install in a throwaway folder (scripts off, as the
# crawl's), then the TypeScript SDK's stdio client runs the entry with node.
i=0
direct=("${pkgs[@]}")
if [ "$passes" = census ]; then
  direct=()
fi
for pkg in "${direct[@]}"; do
  i=$((i + 1))
  spec=${pkg#npm:}
  name=${spec%@*}
  cmd="set -e; d=\$(mktemp -d); trap 'rm -rf \"\$d\"' EXIT; cd \"\$d\"
    timeout 300 npm install --prefix \"\$d\" --ignore-scripts --no-audit --no-fund --no-save --no-package-lock --omit=dev --loglevel=error '$spec' >/dev/null 2>'$out/direct/$i.log' || { echo '{\"error\": \"npm install failed\"}' >'$out/direct/$i.json'; exit 0; }
    entry=\$(node '$here/npm-entry.mjs' \"\$d\" '$name')
    HOME=\"\$d\" timeout 90 node '$here/direct-tools.mjs' '$modules' \"\$entry\" >'$out/direct/$i.json' 2>>'$out/direct/$i.log' || echo '{\"error\": \"the client did not finish\"}' >'$out/direct/$i.json'"
  step direct "$i" "$pkg" "$cmd"
done

python3 "$here/packages_report.py" "$out" >"$out/packages.md"
cat "$out/packages.md"
