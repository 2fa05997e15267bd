#!/usr/bin/env python3
"""Generates vocab.txt, the word stock of the synthetic census, from real MCP
tools/list answers.

Usage: python3 gen_vocab.py TOOLS_JSONL > vocab.txt
(see the go:generate line in vocab.go; the corpus and its licences are
described in its SOURCES.md).

The generator must run on machines that have no copy of the corpus, so what it
needs is distilled here into one small embedded file: server slugs, tool names,
tool descriptions and (type, name, description) property triples, each
deduplicated. Every property that carries one of the five classes is kept, so
the generator can raise class frequencies to census-like levels from real
wording; the others are sampled down to fit the size budget. Sampling is by a
hash of the text, so the output depends only on the corpus.

Format: sections introduced by a line "%server", "%tool" or "%prop"; fields
separated by TAB; backslash, TAB, CR and LF escaped as \\\\, \\t, \\r, \\n.
"""
import hashlib
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import reference  # noqa: E402

TYPES = {"string", "number", "integer", "boolean", "array", "object"}
NAME_OK = re.compile(r'^[^"\\\x00-\x1f\x7f]{1,48}$')

PROP_BUDGET = 160_000
TOOL_NAME_BUDGET = 22_000
TOOL_DESC_BUDGET = 85_000
MAX_PROP_DESC = 110
MAX_TOOL_DESC = 100


def h(s):
    return hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()


def clean(s):
    """Drops control characters other than TAB and LF, and rejects text that
    is not strict UTF-8 (lone surrogates are the generator's own corner)."""
    s = "".join(c for c in s if c in "\t\n" or not (ord(c) < 0x20 or ord(c) == 0x7F))
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return s.strip()


def cut(s, n):
    """Shortens s to at most n characters at a word boundary."""
    if len(s) <= n:
        return s
    s = s[:n]
    i = s.rfind(" ")
    if i > n // 2:
        s = s[:i]
    return s.rstrip(" ,;:")


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r").replace("\n", "\\n")


def main(path):
    slugs, tools, props = set(), {}, {}
    opener = gzip.open if path.endswith(".gz") else open
    for line in opener(path, "rt", encoding="utf-8"):
        rec = json.loads(line)
        server = rec.get("server") or ""
        slug = re.sub(r"[^a-z0-9-]+", "-", server.split("/")[-1].split(":")[-1].lower()).strip("-")
        if 2 <= len(slug) <= 40:
            slugs.add(slug)
        tool = rec["tool"]
        name = tool.get("name")
        desc = tool.get("description")
        if isinstance(name, str) and NAME_OK.match(name):
            d = clean(desc) if isinstance(desc, str) else ""
            if d is not None:
                d = cut(d.split("\n")[0], MAX_TOOL_DESC)
                tools.setdefault(name, set()).add(d)
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict):
            continue
        for objs in [[schema], list((schema.get("$defs") or {}).values()) if isinstance(schema.get("$defs"), dict) else [],
                     list((schema.get("definitions") or {}).values()) if isinstance(schema.get("definitions"), dict) else []]:
            for obj in objs:
                if not isinstance(obj, dict) or not isinstance(obj.get("properties"), dict):
                    continue
                for pname, p in obj["properties"].items():
                    if not NAME_OK.match(pname) or not isinstance(p, dict):
                        continue
                    t = p.get("type")
                    if isinstance(t, list):
                        t = next((x for x in t if x in TYPES), None)
                    if t not in TYPES:
                        t = "string"
                    d = p.get("description")
                    d = clean(d) if isinstance(d, str) else ""
                    if d is None:
                        continue
                    d = cut(d, MAX_PROP_DESC)
                    props.setdefault((pname, d), t)

    # Properties: every class-bearing one, then the rest by hash order.
    keep, rest = [], []
    for (n, d), t in props.items():
        classes, _ = reference.param_hits(n, d)
        (keep if classes else rest).append((t, n, d))
    rest.sort(key=lambda x: h(x[1] + "\t" + x[2]))
    size = sum(len(esc(n)) + len(esc(d)) + len(t) + 3 for t, n, d in keep)
    for t, n, d in rest:
        sz = len(esc(n)) + len(esc(d)) + len(t) + 3
        if size + sz > PROP_BUDGET:
            continue
        keep.append((t, n, d))
        size += sz
    keep.sort()

    names = sorted(tools, key=h)
    out_tools, nsize, dsize = [], 0, 0
    for n in names:
        if nsize + len(n) + 1 > TOOL_NAME_BUDGET:
            break
        nsize += len(n) + 1
        d = min(tools[n], key=h)
        if dsize + len(esc(d)) + 1 > TOOL_DESC_BUDGET:
            d = ""
        dsize += len(esc(d)) + 1
        out_tools.append((n, d))
    out_tools.sort()

    w = sys.stdout
    w.write("# Word stock of the synthetic census, generated by gen_vocab.py from real MCP\n")
    w.write("# tools/list answers (TheAgentArk/Toucan, MIT; icip-cas/LiveMCPBench,\n")
    w.write("# Apache-2.0). Do not edit by hand.\n")
    w.write("%server\n")
    for s in sorted(slugs):
        w.write(s + "\n")
    w.write("%tool\n")
    for n, d in out_tools:
        w.write(esc(n) + "\t" + esc(d) + "\n")
    w.write("%prop\n")
    for t, n, d in keep:
        w.write(t + "\t" + esc(n) + "\t" + esc(d) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main(sys.argv[1])
