#!/usr/bin/env bash
# fetch_zenodo.sh - download Zenodo records with resume and MD5 verification,
# for users without a Go toolchain. It does what `atlas-reproduce fetch` does.
#
# usage: scripts/fetch_zenodo.sh DIR [RECORD...]
#
# RECORD is a Zenodo record ID (23333516), a DOI (10.5281/zenodo.23333516,
# doi:..., https://doi.org/...), Zenodo's DOI link
# (https://zenodo.org/doi/10.5281/zenodo.23333516) or a record page URL
# (https://zenodo.org/records/23333516). For each it reads the records API,
# GET $ZENODO_BASE_URL/api/records/ID, and downloads every file it lists
# to DIR/<key>: through DIR/<key>.part, resumed with `curl -C -` after a
# dropped connection or a rerun, checked with `md5sum -c` and the listed
# size, and only then renamed to DIR/<key>. A file already complete and
# verified is not downloaded again. A file that fails verification is an
# error and its .part is removed, since resuming on wrong bytes cannot verify.
#
# A concept record ID is answered by Zenodo with the newest version; the
# script says which version it fetched, and holds that version to the pins.
#
# With no RECORD it fetches the two records of the frozen census snapshot
# (23333514 and 23333516) and checks the API's MD5 and size against the
# published pins first: a mismatch means the record changed, and nothing is
# downloaded. Asking for a snapshot record's concept (23333513, 23333515)
# fails the same way once Zenodo's newest version is not the pinned one.
#
# Environment:
#   ZENODO_BASE_URL     Zenodo instance (default https://zenodo.org)
#   ZENODO_RETRIES      retries after a failed request (default 5); connection
#                       errors, stalls, 429 and 5xx are retried, other 4xx not
#   ZENODO_RETRY_DELAY  seconds before the first retry, doubled each time up
#                       to 60 (default 1); a longer Retry-After is honoured
#   ZENODO_TIMEOUT      seconds to wait for a connection or for more data
#                       before an attempt is abandoned (default 60)
#
# Requires bash, curl, md5sum (GNU coreutils) and python3 (for the JSON).
# Exits 0 when every file verified, 1 on any failure, 2 on a usage error.

set -euo pipefail

prog=${0##*/}

die() {
	printf '%s: error: %s\n' "$prog" "$*" >&2
	exit 1
}

note() {
	printf '%s: %s\n' "$prog" "$*" >&2
}

usage() {
	sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0" >&2
	exit "${1:-2}"
}

if (($# == 0)); then
	usage 2
fi
case $1 in
-h | --help) usage 0 ;;
-*) printf '%s: unknown option %s\n' "$prog" "$1" >&2 && usage 2 ;;
esac

dest=$1
shift
records=("$@")
if ((${#records[@]} == 0)); then
	records=(23333514 23333516)
fi

for tool in curl md5sum python3; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is required but was not found on PATH"
done

base=${ZENODO_BASE_URL:-https://zenodo.org}
base=${base%/}
retries=${ZENODO_RETRIES:-5}
delay=${ZENODO_RETRY_DELAY:-1}
timeout=${ZENODO_TIMEOUT:-60}
max_retry_after=600
# Zenodo asks API clients to say who they are, and blocks anonymous ones.
user_agent="atlas-reproduce-fetch.sh (+https://github.com/atlas-reproduce/atlas-reproduce)"

[[ $base == http://* || $base == https://* ]] || die "ZENODO_BASE_URL must start with http:// or https:// (got '$base')"
[[ $retries =~ ^[0-9]+$ ]] || die "ZENODO_RETRIES must be a whole number (got '$retries')"
[[ $delay =~ ^[0-9]+([.][0-9]+)?$ ]] || die "ZENODO_RETRY_DELAY must be a number of seconds (got '$delay')"
[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "ZENODO_TIMEOUT must be a positive whole number of seconds (got '$timeout')"
# record_id ARG prints the bare record ID of any accepted form, or fails.
record_id() {
	local s=${1,,}
	s=${s%/}
	if [[ $s =~ ^[0-9]+$ ]]; then
		printf '%s\n' "$s"
	elif [[ $s =~ ^((https?://)?(dx\.)?doi\.org/|doi:|(https?://)?([a-z0-9.-]+\.)?zenodo\.org/doi/)?10\.5281/zenodo\.([0-9]+)$ ]]; then
		printf '%s\n' "${BASH_REMATCH[6]}"
	elif [[ $s =~ ^(https?://)?([a-z0-9.-]+\.)?zenodo\.org/(api/)?records?/([0-9]+)$ ]]; then
		printf '%s\n' "${BASH_REMATCH[4]}"
	else
		return 1
	fi
}

declare -A seen=()
unique=()
for arg in "${records[@]}"; do
	id=$(record_id "$arg") || die "$(printf '%q' "$arg") is not a Zenodo record ID, DOI (10.5281/zenodo.N) or record URL"
	if [[ -z ${seen[$id]:-} ]]; then
		seen[$id]=1
		unique+=("$id")
	fi
done
records=("${unique[@]}")

tmp=$(mktemp -d)
# part is the .part file being filled; one left empty by a failed download
# is removed, since there is nothing in it to resume from.
part=
cleanup() {
	if [[ -n $part && -f $part && ! -s $part ]]; then
		rm -f -- "$part"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# pins RECORD prints the published "key size md5" of the frozen snapshot's
# files in RECORD; a size of - is not published.
pins() {
	case $1 in
	23333514) echo "mcp-atlas-milestone-a-baseline-20261013.zip - 9d383214877ad5c06749995e67a893f5" ;;
	23333516) echo "mcp-atlas-audit-20261013-public.zip 11044763 a22741da7be8622cdaf1783afa91e225" ;;
	esac
}

# pinned_version ID prints the pinned version of a snapshot concept record.
pinned_version() {
	case $1 in
	23333513) echo 23333514 ;;
	23333515) echo 23333516 ;;
	esac
}

file_size() {
	local n
	n=$(wc -c <"$1")
	echo $((n))
}

# md5_matches MD5 DIR NAME: md5sum -c reads names from its input, so it runs
# inside DIR with the bare name (checked to hold no newline or backslash).
md5_matches() {
	(cd "$2" && printf '%s  %s\n' "$1" "$3" | md5sum -c --quiet --status -)
}

# http_get WHAT URL OUT RESUME SIZE downloads URL to OUT, retrying transient
# failures with exponential backoff. With RESUME=1 it continues OUT from its
# current length and stops once OUT has SIZE bytes. Permanent failures exit.
http_get() {
	local what=$1 url=$2 out=$3 resume=$4 size=$5
	local failures=0 wait=$delay high=0 have rc code reason retry_after
	local -a opts=(--location --fail --show-error --connect-timeout "$timeout"
		--speed-limit 1 --speed-time "$timeout" --proto-redir "=http,https"
		--user-agent "$user_agent" --dump-header "$tmp/headers"
		--write-out '%{http_code}' --output "$out")
	if [[ -t 2 && $resume == 1 ]]; then
		opts+=(--progress-bar)
	else
		opts+=(--silent)
	fi
	if [[ $resume == 1 ]]; then
		opts+=(--continue-at - --header 'Accept-Encoding: identity')
		if [[ -f $out ]]; then
			high=$(file_size "$out")
		fi
	else
		opts+=(--header 'Accept: application/json')
	fi
	while :; do
		if [[ $resume == 1 && -f $out ]] && (($(file_size "$out") == size)); then
			return 0
		fi
		# A failed connection writes no headers: a stale Retry-After must not
		# be read from the previous answer.
		rm -f -- "$tmp/headers"
		rc=0
		code=$(curl "${opts[@]}" "$url") || rc=$?
		if ((rc == 0)); then
			if [[ $resume == 1 ]] && (($(file_size "$out") < size)); then
				reason="connection closed after $(file_size "$out") of $size bytes"
			else
				return 0
			fi
		else
			case $rc in
			22)
				if [[ $code == 429 || $code == 5?? ]]; then
					reason="server answered HTTP $code"
				elif [[ $code == 416 && $resume == 1 ]]; then
					reason="server refused to resume (HTTP 416); restarting from byte 0"
					: >"$out"
				elif [[ $code == 404 || $code == 410 ]]; then
					die "$what: not found: $url answered HTTP $code"
				else
					die "$what: $url answered HTTP $code"
				fi
				;;
			33)
				reason="server ignored the range request; restarting from byte 0"
				: >"$out"
				;;
			1 | 2 | 3 | 23 | 26 | 27 | 47 | 60 | 77)
				# 1: a redirect to another protocol; 47: a redirect loop.
				die "$what: curl failed (exit $rc) for $url"
				;;
			*)
				reason="connection failed (curl exit $rc)"
				;;
			esac
		fi
		if [[ $resume == 1 && -f $out ]]; then
			have=$(file_size "$out")
			# Growth past the furthest point so far is progress, which
			# restores the retry budget for long downloads on flaky links.
			if ((have > high)); then
				high=$have
				failures=0
				wait=$delay
			fi
		fi
		failures=$((failures + 1))
		if ((failures > retries)); then
			die "$what: giving up after $retries retries: $reason"
		fi
		retry_after=$(tr -d '\r' <"$tmp/headers" 2>/dev/null | awk 'tolower($1) == "retry-after:" { v = $2 } END { print v }')
		local this_wait=$wait
		if [[ $retry_after =~ ^[0-9]+$ ]]; then
			if ((retry_after > max_retry_after)); then
				die "$what: the server asked to retry after ${retry_after}s; try again later"
			fi
			this_wait=$(awk -v a="$wait" -v b="$retry_after" 'BEGIN { print (b > a ? b : a) }')
		fi
		note "$what: $reason; retry $failures of $retries in ${this_wait}s"
		sleep "$this_wait"
		wait=$(awk -v w="$wait" 'BEGIN { w *= 2; print (w > 60 ? 60 : w) }')
	done
}

# Read every record's metadata and check the pins before downloading, so
# that a changed record costs no bandwidth.
declare -A owner=()
versions=()
declare -A seen_version=()
n=0
for id in "${records[@]}"; do
	api="$base/api/records/$id"
	http_get "record $id" "$api" "$tmp/record.json" 0 0
	if ! PYTHONIOENCODING=utf-8 python3 - "$api" "$tmp/record.json" "$tmp/version.$n" >"$tmp/files.$n" <<'PY'; then
import json
import re
import sys
import unicodedata
from urllib.parse import quote, urljoin, urlsplit

api, path = sys.argv[1], sys.argv[2]
try:
    with open(path, encoding="utf-8") as fh:
        rec = json.load(fh)
except ValueError as e:
    sys.exit(f"the records API answer at {api} is not JSON: {e}")
files = rec.get("files") if isinstance(rec, dict) else None
if not isinstance(files, list) or not files:
    sys.exit("the records API lists no files (a restricted or metadata-only record?)")
version = rec.get("id")
version = str(version) if isinstance(version, (int, str)) and not isinstance(version, bool) else ""
concept = rec.get("conceptrecid")
concept = str(concept) if isinstance(concept, (int, str)) and not isinstance(concept, bool) else ""
if not re.fullmatch(r"[0-9]+", version):
    sys.exit(f"the records API answer at {api} gives no record id")
if concept and not re.fullmatch(r"[0-9]+", concept):
    concept = ""
with open(sys.argv[3], "w", encoding="utf-8") as out:
    print(f"{version}\t{concept}", file=out)
for i, f in enumerate(files):
    if not isinstance(f, dict):
        sys.exit(f"file {i}: not a JSON object")
    key = f.get("key")
    if (not isinstance(key, str) or key in ("", ".", "..") or re.search(r"[/\\]", key)
            or any(unicodedata.category(c) in ("Cc", "Cf") for c in key)
            or key.endswith(".part") or key.startswith(".outset-")):
        sys.exit(f"file {i}: unsafe or missing file name {ascii(key)}")
    size = f.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        sys.exit(f"{key}: the records API gives no size")
    alg, _, digest = str(f.get("checksum") or "").partition(":")
    if alg.lower() != "md5" or not re.fullmatch(r"[0-9a-fA-F]{32}", digest):
        sys.exit(f"{key}: the records API gives no MD5 checksum (got {f.get('checksum')!r})")
    link = (f.get("links") or {}).get("self")
    if not isinstance(link, str) or not link:
        sys.exit(f"{key}: the records API gives no links.self download URL")
    # Escape what curl would refuse (spaces, non-ASCII) and keep the rest,
    # including existing %XX escapes, as the API wrote it.
    url = quote(urljoin(api, link), safe=":/?#[]@!$&'()*+,;=%~")
    if urlsplit(url).scheme not in ("http", "https"):
        sys.exit(f"{key}: download URL {url!r} is not http or https")
    print(f"{key}\t{size}\t{digest.lower()}\t{url}")
PY
		die "record $id: cannot use the records API answer from $api"
	fi
	IFS=$'\t' read -r version concept <"$tmp/version.$n"
	if [[ $version != "$id" ]]; then
		note "record $id is a concept record; Zenodo answers with its newest version, record $version, which is the one fetched"
	fi
	# A pin reached through the concept must name the version answered.
	for c in "$id" "$concept"; do
		want=$(pinned_version "$c")
		[[ -z $want || $want == "$version" ]] || die "record $id: the record changed: Zenodo answers with version $version, the published pin is version $want"
	done
	versions[n]=$version
	if [[ -n ${seen_version[$version]:-} ]]; then
		# Another form of the same version: its files are already listed.
		: >"$tmp/files.$n"
		n=$((n + 1))
		continue
	fi
	seen_version[$version]=1
	while read -r pkey psize pmd5; do
		found=0
		while IFS=$'\t' read -r key size md5 url; do
			[[ $key == "$pkey" ]] || continue
			found=1
			[[ $md5 == "$pmd5" ]] || die "record $id: $key: the record changed: the records API gives MD5 $md5, the published pin is $pmd5"
			[[ $psize == - || $size == "$psize" ]] || die "record $id: $key: the record changed: the records API gives $size bytes, the published pin is $psize"
		done <"$tmp/files.$n"
		((found)) || die "record $id: the record changed: it no longer lists $pkey"
	done < <(pins "$version")
	while IFS=$'\t' read -r key size md5 url; do
		lower=${key,,}
		[[ -z ${owner[$lower]:-} ]] || die "record $version: file $key clashes with a file of record ${owner[$lower]} in $dest"
		owner[$lower]=$version
	done <"$tmp/files.$n"
	n=$((n + 1))
done

mkdir -p -- "$dest"

i=0
for _ in "${records[@]}"; do
	id=${versions[i]}
	while IFS=$'\t' read -r key size md5 url <&3; do
		final="$dest/$key"
		part="$final.part"
		if [[ -f $final ]] && (($(file_size "$final") == size)) && md5_matches "$md5" "$dest" "$key"; then
			note "$key: already complete ($size bytes, MD5 verified)"
			continue
		fi
		if [[ -f $part ]] && (($(file_size "$part") > size)); then
			: >"$part"
		fi
		# An existing part file lets http_get skip an empty file's request.
		: >>"$part"
		http_get "record $id: $key" "$url" "$part" 1 "$size"
		got=$(file_size "$part")
		if ((got != size)) || ! md5_matches "$md5" "$dest" "$key.part"; then
			sum=$(md5sum <"$part")
			rm -f -- "$part"
			die "record $id: $key: download does not verify: got $got bytes with MD5 ${sum%% *}, the record lists $size bytes with MD5 $md5; removed $part"
		fi
		mv -f -- "$part" "$final"
		part=
		note "$key: $size bytes, MD5 verified"
	done 3<"$tmp/files.$i"
	i=$((i + 1))
done
