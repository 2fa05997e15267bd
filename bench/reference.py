#!/usr/bin/env python3
"""Plain Python reference for the parameter risk classes (json + re).

This is the oracle the Go implementation is tested against and the baseline it
is timed against. It follows the spec's decision rules literally: the haystack
is str.lower() of name + " : " + description, and each pattern is applied with
re.search(pattern, haystack, re.IGNORECASE).

Modes:
  pairs     stdin: JSON lines [name, description]; stdout: one JSON list of
            labels (sorted) per line.
  classify  stdin: JSON lines of tools / records; stdout: the classify output
            format of atlas-reproduce (one line per tool).
  census    argv: path to server_tools.jsonl(.gz); stdout: aggregate counts
            as JSON (tools, servers, classes, buckets, shapes).
"""
import gzip
import io
import json
import re
import sys

# The five normative classes, in the spec's section order.
PARAM_CLASSES = {
    "gg:credential-value": [
        r"(?<![a-z0-9_])(token|apikey|api_key|secret|password|passwd|private_key|access_key|credential|client_secret|bearer|authorization)(?![a-z0-9_])",
    ],
    "gg:filesystem-path": [
        r"(?<![a-z0-9_])(path|filepath|filename|file_path|dir|directory|folder|target_path|destination_path|dest_path)(?![a-z0-9_])",
    ],
    "gg:command-string": [
        r"(?<![a-z0-9_])(command|cmd|script|code|expression|sql|statement|shell_cmd|args?|arguments?|instruction|prompt)(?![a-z0-9_])",
    ],
    "gg:money-amount": [
        r"(?<![a-z0-9_])(amount|price|total|sum|currency|refund_amount|charge_amount|unit_amount|cents)(?![a-z0-9_])",
        r"\b(amount in|monetary|currency code)\b",
    ],
    "gg:url-endpoint": [
        r"(?<![a-z0-9_])(url|uri|endpoint|webhook_url|target_url|host|hostname|domain|link|webhook|base_url|callback_url)(?![a-z0-9_])",
    ],
}

# Non-normative high-recall buckets, reported apart from the classes.
BUCKETS = {
    "raw_content_blob": [
        r"(?<![a-z0-9_])(content|body|data|payload|html|markdown|file_content|text)(?![a-z0-9_])",
    ],
    "account_identity": [
        r"(?<![a-z0-9_])(account|account_id|iban|wallet|recipient|customer_id|user_id|beneficiary|card_token|payment_method|bank|routing_number|email|to|from)(?![a-z0-9_])",
    ],
}

_CLASS_RX = [(k, [re.compile(p, re.IGNORECASE) for p in v]) for k, v in PARAM_CLASSES.items()]
_BUCKET_RX = [(k, [re.compile(p, re.IGNORECASE) for p in v]) for k, v in BUCKETS.items()]

SERVER_ID_KEYS = ("server_id", "server", "server_url", "url")


def param_hits(name, description):
    """Labels (classes, buckets) of one property, each a sorted list."""
    haystack = (name + " : " + description).lower()
    classes = sorted(k for k, rxs in _CLASS_RX if any(rx.search(haystack) for rx in rxs))
    buckets = sorted(k for k, rxs in _BUCKET_RX if any(rx.search(haystack) for rx in rxs))
    return classes, buckets


def _schema_props(obj, where):
    props = obj.get("properties")
    if not isinstance(props, dict):
        return
    req = obj.get("required")
    req = [r for r in req if isinstance(r, str)] if isinstance(req, list) else []
    for name, p in props.items():
        desc = p.get("description") if isinstance(p, dict) else None
        if not isinstance(desc, str):
            desc = ""
        yield name, desc, name in req, where


def iter_properties(schema):
    """Property enumeration: top-level properties, then each object schema under
    definitions, then under $defs, that itself has a properties object."""
    if not isinstance(schema, dict):
        return
    yield from _schema_props(schema, "properties")
    for key in ("definitions", "$defs"):
        defs = schema.get(key)
        if not isinstance(defs, dict):
            continue
        for dname, d in defs.items():
            if isinstance(d, dict) and isinstance(d.get("properties"), dict):
                yield from _schema_props(d, key + "/" + dname)


def server_id(rec):
    """First server id alias present with a string or integer value."""
    for k in SERVER_ID_KEYS:
        if k in rec:
            v = rec[k]
            if isinstance(v, str):
                return v
            if isinstance(v, int) and not isinstance(v, bool):
                return str(v)
    return None


class BadRecord(ValueError):
    pass


def tools_of(rec):
    """(shape, server_id, [tool, ...]) for one decoded line."""
    if not isinstance(rec, dict):
        raise BadRecord("record is not a JSON object")
    sid = server_id(rec)
    if "tools" in rec:
        tools = rec["tools"]
        if not isinstance(tools, list):
            raise BadRecord('"tools" is not a list')
        for i, t in enumerate(tools):
            if not isinstance(t, dict):
                raise BadRecord('"tools"[%d] is not a JSON object' % i)
        return "server", sid, tools
    if "tool" in rec:
        t = rec["tool"]
        if not isinstance(t, dict):
            raise BadRecord('"tool" is not a JSON object')
        return "tool", sid, [t]
    return "flat", sid, [rec]


def tool_schema(tool):
    s = tool.get("inputSchema")
    if s is None:
        s = tool.get("input_schema")
    return s


def classify_tool(sid, tool):
    name = tool.get("name")
    if not isinstance(name, str):
        name = None
    props = []
    classes, required, buckets = set(), set(), set()
    for pname, desc, req, where in iter_properties(tool_schema(tool)):
        c, b = param_hits(pname, desc)
        classes.update(c)
        buckets.update(b)
        if req:
            required.update(c)
        props.append({"name": pname, "where": where, "required": req, "classes": c, "buckets": b})
    return {
        "server_id": sid,
        "tool": name,
        "classes": sorted(classes),
        "required_classes": sorted(required),
        "buckets": sorted(buckets),
        "properties": props,
    }


def read_lines(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="\n")
    return open(path, "rt", encoding="utf-8", newline="\n")


def _stdin_lines():
    """stdin as the census files are read: strict UTF-8, split on \n only."""
    return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline="\n")


def main_pairs():
    out = sys.stdout
    for line in _stdin_lines():
        name, desc = json.loads(line)
        c, b = param_hits(name, desc)
        out.write(json.dumps(c + b) + "\n")


def main_classify():
    out = sys.stdout
    for n, line in enumerate(_stdin_lines(), 1):
        if not line.strip():
            continue
        shape, sid, tools = tools_of(json.loads(line))
        for t in tools:
            out.write(json.dumps(classify_tool(sid, t), ensure_ascii=False) + "\n")


def main_census(path):
    tools = 0
    servers = set()
    shapes = {}
    counts = {k: [0, 0] for k in PARAM_CLASSES}
    bucket_counts = {k: 0 for k in BUCKETS}
    with read_lines(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            shape, sid, ts = tools_of(json.loads(line))
            shapes[shape] = shapes.get(shape, 0) + 1
            for t in ts:
                r = classify_tool(sid, t)
                tools += 1
                if sid is not None:
                    servers.add(sid)
                for c in r["classes"]:
                    counts[c][0] += 1
                for c in r["required_classes"]:
                    counts[c][1] += 1
                for b in r["buckets"]:
                    bucket_counts[b] += 1
    json.dump({
        "tools": tools,
        "servers": len(servers),
        "shapes": shapes,
        "classes": {k: {"tools": v[0], "required": v[1]} for k, v in counts.items()},
        "buckets": bucket_counts,
    }, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "pairs":
        main_pairs()
    elif mode == "classify":
        main_classify()
    elif mode == "census" and len(sys.argv) == 3:
        main_census(sys.argv[2])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
