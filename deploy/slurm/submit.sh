#!/bin/sh
# Submits a sharded census crawl and its merge to Slurm: N array tasks of
# crawl-array.sbatch, then merge.sbatch once all of them succeeded. The
# release is written to $CENSUS/release.
#
# usage: ATLAS=BIN CANDIDATES=FILE CENSUS=DIR deploy/slurm/submit.sh N [SBATCH_OPTION...]
# SBATCH_OPTIONs (a partition, --mem, --output) apply to both jobs.
set -eu
if [ $# -lt 1 ]; then
  echo "usage: ATLAS=BIN CANDIDATES=FILE CENSUS=DIR $0 N [SBATCH_OPTION...]" >&2
  exit 2
fi
n=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$CENSUS/shards"
crawl=$(sbatch --parsable --array="0-$((n - 1))" --export=ALL "$@" "$here/crawl-array.sbatch")
crawl=${crawl%%;*}
merge=$(sbatch --parsable --dependency="afterok:$crawl" --export="ALL,SHARDS=$n" "$@" "$here/merge.sbatch")
merge=${merge%%;*}
echo "crawl $crawl merge $merge"
