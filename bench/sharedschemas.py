"""Write a census whose tools share their schemas in runs, from another census.

    python3 bench/sharedschemas.py IN OUT [--run 4]

Within each server of IN's server_tools.jsonl.gz, tools go in runs of --run:
each tool of a run takes the description and input schema of the run's first
tool and keeps its own name, as the tools of one API wrapper often do. Names
stay distinct within a server, so (nearly) every definition stays distinct,
while the repetition makes the file compress about 10:1 (IN = the default
synthetic census: 95 MB of JSON in 9.6 MB): a census whose decompression is
cheap beside its decoding, where `run`'s ratio to `gzip -dc` is at its
highest. OUT gets server_tools.jsonl.gz, IN's servers.jsonl.gz and
candidates_remotes.jsonl, and SHA256SUMS; no truth.json, so `run` gives it a
release report.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import shutil


def share(tools, run):
    """The tools of one server, each run's schema and description shared."""
    out = []
    for i, t in enumerate(tools):
        first = tools[i - i % run]
        if isinstance(t, dict) and isinstance(first, dict) and t is not first:
            c = dict(first)
            if "name" in t:
                c["name"] = t["name"]
            else:
                c.pop("name", None)
            t = c
        out.append(t)
    return out


def open_text(path):
    """A gzip text writer whose bytes depend only on what is written (no
    time in its header)."""
    return io.TextIOWrapper(gzip.GzipFile(path, "wb", compresslevel=6, mtime=0), encoding="ascii")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--run", type=int, default=4)
    a = ap.parse_args()
    if a.run < 1:
        ap.error("--run must be at least 1")
    os.makedirs(a.out, exist_ok=True)
    src = os.path.join(a.inp, "server_tools.jsonl.gz")
    dst = os.path.join(a.out, "server_tools.jsonl.gz")
    with gzip.open(src, "rt", encoding="utf-8") as f, open_text(dst + ".tmp") as g:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"{src}:{n}: {e}")
            if isinstance(rec, dict) and isinstance(rec.get("tools"), list):
                rec["tools"] = share(rec["tools"], a.run)
            # ASCII escapes keep lone surrogates, which UTF-8 cannot encode.
            g.write(json.dumps(rec, ensure_ascii=True) + "\n")
    os.replace(dst + ".tmp", dst)
    for name in ("servers.jsonl.gz", "candidates_remotes.jsonl"):
        shutil.copyfile(os.path.join(a.inp, name), os.path.join(a.out, name))
    names = ("server_tools.jsonl.gz", "servers.jsonl.gz", "candidates_remotes.jsonl")
    with open(os.path.join(a.out, "SHA256SUMS.tmp"), "w") as f:
        for name in names:
            with open(os.path.join(a.out, name), "rb") as r:
                h = hashlib.sha256()
                for block in iter(lambda: r.read(1 << 20), b""):
                    h.update(block)
                f.write("%s  %s\n" % (h.hexdigest(), name))
    os.replace(os.path.join(a.out, "SHA256SUMS.tmp"), os.path.join(a.out, "SHA256SUMS"))


if __name__ == "__main__":
    main()
