#!/usr/bin/env python3
"""Turn a synthetic census into a heavy-tailed one, for measuring memory.

usage: giant_census.py DIR TOOLS

Rewrites DIR/server_tools.jsonl.gz (a census of shape servers, as `synth`
writes it) so that its first line is one server holding the tools of the
first servers until it has TOOLS tools: one giant line, as an aggregator
server gives. The rest of the file is unchanged, so every tool is still
counted once; the SHA256SUMS no longer match (run it with --no-verify).
"""
import gzip
import json
import os
import sys


def main():
    folder, want = sys.argv[1], int(sys.argv[2])
    path = os.path.join(folder, "server_tools.jsonl.gz")
    tmp = path + ".tmp"
    # The lines are spliced as text, not re-encoded, so that escapes such
    # as lone surrogates keep their bytes; only lines whose "tools" comes last
    # are merged.
    with gzip.open(path, "rt", encoding="utf-8") as src, \
            gzip.open(tmp, "wt", encoding="utf-8", compresslevel=1) as dst:
        parts, have = [], 0
        for line in src:
            if have >= want:
                dst.write(line)
                continue
            body = line.rstrip("\n")
            if not body.endswith("]}"):
                # "tools" is not the last key: keep the line as it is.
                dst.write(line)
                continue
            n = len(json.loads(line)["tools"])
            if not parts:
                parts.append(body[:-2])
            elif n:
                parts.append(body[body.index('"tools": [') + 10:-2])
            else:
                continue
            have += n
            if have >= want:
                text = ", ".join(parts) + "]}"
                dst.write(text + "\n")
                print(f"giant line: {have} tools, {len(text.encode('utf-8'))} bytes",
                      file=sys.stderr)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
