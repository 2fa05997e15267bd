#!/usr/bin/env python3
"""The table of make bench-packages: per package, the cold and warm crawl's
wall and CPU, what the cold one fetched, whether cold and warm records are
the same, and the crawl's tool list beside the direct run's; then the
averages, the targets of docs/bench-packages.md and the extrapolation to
the registry.

usage: packages_report.py OUT   (the folder bench/packages.sh wrote)
"""
import csv
import gzip
import json
import os
import sys

REGISTRY_NPM = 25_000  # npm entries of the registry (docs/bench-packages.md)
CORES = 2


def read_gz_lines(path):
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return [l for l in f.read().splitlines() if l]
    except FileNotFoundError:
        return None


def crawl_result(out, phase, i):
    d = os.path.join(out, phase, str(i))
    servers = read_gz_lines(os.path.join(d, "servers.jsonl.gz"))
    tools = read_gz_lines(os.path.join(d, "server_tools.jsonl.gz"))
    if not servers:
        return {"kind": "no release", "tools": None, "bytes": None}
    rec = json.loads(servers[0])
    names = []
    for l in tools or []:
        names += [t["name"] for t in json.loads(l).get("tools", [])]
    kind = "ok" if rec.get("reachable") else rec.get("error_kind", "?")
    return {"kind": kind, "tools": sorted(names) if rec.get("reachable") else None,
            "error": rec.get("error", ""), "bytes": (servers, tools)}


def read_lines(path):
    with open(path) as f:
        return [l for l in f.read().splitlines() if l.strip() and not l.lstrip().startswith("#")]


def same_records(out, a, b):
    """How many servers the census passes a and b recorded alike (the
    server line and its tools line), and the ids of those that differ."""
    def by_id(phase):
        d = os.path.join(out, phase, "0")
        got = {}
        for l in read_gz_lines(os.path.join(d, "servers.jsonl.gz")) or []:
            got.setdefault(json.loads(l)["server_id"], [None, None])[0] = l
        for l in read_gz_lines(os.path.join(d, "server_tools.jsonl.gz")) or []:
            got.setdefault(json.loads(l)["server_id"], [None, None])[1] = l
        return got
    x, y = by_id(a), by_id(b)
    changed = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
    return len(set(x) | set(y)) - len(changed), changed


def main():
    out = sys.argv[1]
    rows = {}
    with open(os.path.join(out, "measure.tsv"), newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rows.setdefault(int(r["index"]), {"package": r["package"]})[r["phase"]] = r
    lines = ["| # | package | cold wall s | cold CPU s | fetched MB | conns | warm wall s | warm CPU s | record | cold = warm | direct run | tools equal |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|---|"]
    tot = {"cold_wall": 0.0, "cold_cpu": 0.0, "fetched": 0, "conns": 0, "warm_wall": 0.0, "warm_cpu": 0.0}
    same = differ = equal = unequal = direct_listed = 0
    n = 0
    for i in sorted(rows):
        r = rows[i]
        if "cold" not in r or "warm" not in r:
            continue
        n += 1
        cold, warm = r["cold"], r["warm"]
        tot["cold_wall"] += float(cold["wall_s"])
        tot["cold_cpu"] += float(cold["cpu_s"])
        tot["fetched"] += int(cold["fetched_bytes"])
        tot["conns"] += int(cold["connections"])
        tot["warm_wall"] += float(warm["wall_s"])
        tot["warm_cpu"] += float(warm["cpu_s"])
        c, w = crawl_result(out, "cold", i), crawl_result(out, "warm", i)
        is_same = c["bytes"] is not None and c["bytes"] == w["bytes"]
        same += is_same
        differ += not is_same
        record = f"{len(c['tools'])} tools" if c["tools"] is not None else c["kind"]
        try:
            with open(os.path.join(out, "direct", f"{i}.json")) as f:
                direct = json.loads(f.read().strip().splitlines()[-1])
        except (FileNotFoundError, IndexError, json.JSONDecodeError):
            direct = {"error": "no direct run"}
        if "tools" in direct:
            direct_listed += 1
            d = f"{len(direct['tools'])} tools"
            eq = c["tools"] == direct["tools"]
            equal += eq
            unequal += not eq
            eqs = "yes" if eq else "**no**"
        else:
            d, eqs = "error: " + direct["error"][:40].replace("|", "/"), "n/a"
        lines.append(f"| {i} | `{r['package'][4:]}` | {float(cold['wall_s']):.1f} | {float(cold['cpu_s']):.1f} | "
                     f"{int(cold['fetched_bytes']) / 1e6:.1f} | {cold['connections']} | {float(warm['wall_s']):.1f} | "
                     f"{float(warm['cpu_s']):.1f} | {record} | {'yes' if is_same else '**no**'} | {d} | {eqs} |")
    census = rows.get(0, {})
    rows_measured = n > 0
    if n == 0:
        if "census-cold" not in census:
            print("no package was measured", file=sys.stderr)
            sys.exit(1)
        # BENCH_PASSES=census: the census passes alone.
        lines = []
        n = len(read_lines(os.path.join(out, "cand", "all.txt")))
    else:
        cache = max(int(r["cold"]["cache_bytes"]) for r in rows.values() if "cold" in r)
        avg = {k: v / n for k, v in tot.items()}
    reuse_line = None
    if all(p in census for p in ("census-cold", "census-warm", "census-next")):
        # One crawl of the whole list: what a census pays, its fixed
        # costs once.
        lines += ["", "One crawl of the whole list, as a census runs it (packages two at a time):", "",
                  "| pass | wall s | CPU s | CPU s a package | fetched MB | MB a package | tarballs | cache MB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for p, what in (("census-cold", "cold (empty cache)"), ("census-warm", "warm (every package installed)"),
                        ("census-next", "next month (store kept, a tenth of folders removed)"),
                        ("census-reuse", "next month, records reused (another tenth removed, `--reuse-package-records`)")):
            r = census.get(p)
            if r is None:
                continue
            lines.append(f"| {what} | {float(r['wall_s']):.0f} | {float(r['cpu_s']):.1f} | {float(r['cpu_s']) / n:.2f} | "
                         f"{int(r['fetched_bytes']) / 1e6:.1f} | {int(r['fetched_bytes']) / n / 1e6:.2f} | {r.get('tarballs', '0')} | "
                         f"{int(r['cache_bytes']) / 1e6:.0f} |")
        cold_cpu = float(census["census-cold"]["cpu_s"]) / n
        next_cpu = float(census["census-next"]["cpu_s"]) / n
        cold_fetched = int(census["census-cold"]["fetched_bytes"]) / n
        basis = "the census passes"
        if "census-reuse" in census:
            reuse_cpu = float(census["census-reuse"]["cpu_s"]) / n
            reuse_h = REGISTRY_NPM * reuse_cpu / CORES / 3600
            same_recs, changed = same_records(out, "census-next", "census-reuse")
            reuse_line = (f"- the next month's crawl with the records of unchanged installs reused: {reuse_h:.1f} h "
                          f"(target ≤ 2 h: {'met' if reuse_h <= 2 else '**not met**'}); its records equal those of the "
                          f"pass that ran every server: {same_recs} of {n}"
                          + (f" (**{len(changed)} differ**: {', '.join(changed)})" if changed else ""))
    else:
        cold_cpu, cold_fetched = avg["cold_cpu"], avg["fetched"]
        next_cpu = 0.9 * avg["warm_cpu"] + 0.1 * avg["cold_cpu"]
        basis = "the per-package averages (a changed package counted as wholly cold)"
    cold_h = REGISTRY_NPM * cold_cpu / CORES / 3600
    next_h = REGISTRY_NPM * next_cpu / CORES / 3600
    if not rows_measured:
        lines += ["", f"- the registry's {REGISTRY_NPM:,} npm entries on one {CORES}-core machine, CPU-bound at {basis}: "
                  f"cold {cold_h:.1f} h; the next month's crawl, every server run again, {next_h:.1f} h"]
        if reuse_line:
            lines.append(reuse_line)
        print("\n".join(lines))
        return
    lines += [
        "",
        f"{n} packages. Averages per package: cold {avg['cold_wall']:.1f} s wall, {avg['cold_cpu']:.2f} CPU-s, "
        f"{avg['fetched'] / 1e6:.1f} MB fetched in {avg['conns']:.0f} connections; warm {avg['warm_wall']:.1f} s wall, "
        f"{avg['warm_cpu']:.2f} CPU-s. Package cache after the cold pass: {cache / 1e6:.0f} MB "
        f"({cache / n / 1e6:.1f} MB a package).",
        "",
        f"- records the same cold and warm: {same} of {n}" + (f" (**{differ} differ**)" if differ else ""),
        f"- tool lists equal to the direct run's, where it listed tools: {equal} of {direct_listed}"
        + (f" (**{unequal} differ**)" if unequal else ""),
        f"- targets, one package a crawl: cold ≤ 5 CPU-s a package: {'met' if avg['cold_cpu'] <= 5 else '**not met**'} ({avg['cold_cpu']:.2f}); "
        f"cold ≤ 15 MB fetched: {'met' if avg['fetched'] <= 15e6 else '**not met**'} ({avg['fetched'] / 1e6:.1f}); "
        f"warm ≤ 1.5 CPU-s: {'met' if avg['warm_cpu'] <= 1.5 else '**not met**'} ({avg['warm_cpu']:.2f})",
        f"- targets, the whole list in one crawl: cold ≤ 5 CPU-s a package: {'met' if cold_cpu <= 5 else '**not met**'} ({cold_cpu:.2f}); "
        f"cold ≤ 15 MB fetched: {'met' if cold_fetched <= 15e6 else '**not met**'} ({cold_fetched / 1e6:.1f})",
        f"- the registry's {REGISTRY_NPM:,} npm entries on one {CORES}-core machine, CPU-bound at {basis}: "
        f"cold {cold_h:.1f} h (target ≤ 12 h: {'met' if cold_h <= 12 else '**not met**'}); the next month's crawl, "
        f"store kept and a tenth changed, every server run again, {next_h:.1f} h (target ≤ 2 h: {'met' if next_h <= 2 else '**not met**'})",
    ]
    if reuse_line:
        lines.append(reuse_line)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
