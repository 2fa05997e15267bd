#!/usr/bin/env python3
"""The three non-normative sensitivity variants, applied literally in CPython.

Usage: sensitivity.py REFERENCE_PY < tools.jsonl

REFERENCE_PY is bench/reference.py, whose normative definitions (tools_of,
tool_schema, iter_properties, param_hits, classify_tool) are used as they
are. Output: for each tool, the line `reference.py classify` prints, with one
more key, "sensitivity", holding what each variant adds to the tool:

  camel_case  every normative property's name rewritten by
              re.sub(BOUNDARY, '_', name), the description unchanged
  word_split  re.sub(BOUNDARY, ' ', name) with every '_', '-' and '.' replaced
              by a space
  deep        every entry of every "properties" object anywhere in the schema,
              reached through the keywords below; the root is depth 0, a
              schema under a keyword is one deeper, a node deeper than 64 is
              not read; $ref is not followed

A variant adds a class when the class is in the variant's label set and not
in the tool's normative classes; "required_classes" are the added classes a
required property carries in the variant.
"""
import importlib.util
import io
import json
import re
import sys

BOUNDARY = r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])'
MAX_DEPTH = 64

SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions")
SCHEMAS = ("additionalProperties", "not", "if", "then", "else")
LISTS = ("prefixItems", "anyOf", "oneOf", "allOf")


def load_reference(path):
    spec = importlib.util.spec_from_file_location("reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ref = load_reference(sys.argv[1])


def labels(name, description):
    return set(ref.param_hits(name, description)[0])


def camel_case(name):
    return re.sub(BOUNDARY, '_', name)


def word_split(name):
    return re.sub(BOUNDARY, ' ', name).replace('_', ' ').replace('-', ' ').replace('.', ' ')


def deep_properties(node, depth, out):
    """Append (name, description) of every properties entry under node."""
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        return
    props = node.get("properties")
    if isinstance(props, dict):
        for name, p in props.items():
            desc = p.get("description") if isinstance(p, dict) else None
            if not isinstance(desc, str):
                desc = ""
            out.append((name, desc))
    for key, v in node.items():
        if key in SCHEMA_MAPS:
            if isinstance(v, dict):
                for sub in v.values():
                    deep_properties(sub, depth + 1, out)
        elif key in SCHEMAS:
            deep_properties(v, depth + 1, out)
        elif key == "items":
            if isinstance(v, list):
                for sub in v:
                    deep_properties(sub, depth + 1, out)
            else:
                deep_properties(v, depth + 1, out)
        elif key in LISTS:
            if isinstance(v, list):
                for sub in v:
                    deep_properties(sub, depth + 1, out)


def sensitivity(tool):
    props = list(ref.iter_properties(ref.tool_schema(tool)))
    base = set()
    for name, desc, req, where in props:
        base |= labels(name, desc)
    out = {}
    for variant, rewrite in (("camel_case", camel_case), ("word_split", word_split)):
        got, got_req = set(), set()
        for name, desc, req, where in props:
            lab = labels(rewrite(name), desc)
            got |= lab
            if req:
                got_req |= lab
        out[variant] = {"classes": sorted(got - base), "required_classes": sorted(got_req - base)}
    found = []
    deep_properties(ref.tool_schema(tool), 0, found)
    got = set()
    for name, desc in found:
        got |= labels(name, desc)
    out["deep"] = {"classes": sorted(got - base)}
    return out


# classify writes a lone surrogate (which UTF-8 cannot carry) as its \\u
# escape, as json.dumps does with ensure_ascii=True.
LONE_SURROGATE = re.compile('[\ud800-\udfff]')


def _escape(m):
    return '\\u%04x' % ord(m.group())


def main():
    out = sys.stdout
    for line in io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", newline="\n"):
        if not line.strip():
            continue
        shape, sid, tools = ref.tools_of(json.loads(line))
        for t in tools:
            r = ref.classify_tool(sid, t)
            r["sensitivity"] = sensitivity(t)
            out.write(LONE_SURROGATE.sub(_escape, json.dumps(r, ensure_ascii=False)) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main()
