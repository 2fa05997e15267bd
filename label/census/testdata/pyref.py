#!/usr/bin/env python3
"""Differential driver: what the Python reference makes of each line.

usage: pyref.py PATH/TO/bench/reference.py LINES_FILE

LINES_FILE is split on b"\n" only (as the census mode's newline="\n" reader
splits). For each line one JSON object is printed:
  {"blank": true}                      line.strip() is empty: skipped
  {"err": "syntax"}                    strict UTF-8 decoding or json.loads fails
  {"err": "record", "msg": "..."}      tools_of raises BadRecord
  {"shape", "sid", "tools": [{"name", "desc", "props": [{"n","d","r","w"}]}]}
Strings are the hex of their UTF-8 bytes with surrogatepass, so lone
surrogates survive; None is null.
"""
import importlib.util
import json
import sys

spec = importlib.util.spec_from_file_location("reference", sys.argv[1])
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)


def h(s):
    return None if s is None else s.encode("utf-8", "surrogatepass").hex()


def one(raw):
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"err": "syntax"}
    if not line.strip():
        return {"blank": True}
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):
        return {"err": "syntax"}
    try:
        shape, sid, tools = ref.tools_of(rec)
    except ref.BadRecord as e:
        return {"err": "record", "msg": str(e)}
    out = []
    for t in tools:
        name = t.get("name")
        desc = t.get("description")
        out.append({
            "name": h(name) if isinstance(name, str) else None,
            "desc": h(desc) if isinstance(desc, str) else None,
            "props": [{"n": h(n), "d": h(d), "r": r, "w": h(w)}
                      for n, d, r, w in ref.iter_properties(ref.tool_schema(t))],
        })
    return {"shape": shape, "sid": h(sid), "tools": out}


def main():
    with open(sys.argv[2], "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    w = sys.stdout.write
    for raw in lines:
        w(json.dumps(one(raw)) + "\n")


main()
