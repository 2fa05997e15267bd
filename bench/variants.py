"""Write a variant of a census, one trait changed, to find what makes `run` costly.

    python3 bench/variants.py IN OUT VARIANT

Each tool of IN's server_tools.jsonl.gz is rewritten by VARIANT (seeded, so
the output depends only on IN and VARIANT), and every line is written again
by CPython's json.dumps (", " and ": " separators) into a gzip stream at
level 9. OUT gets server_tools.jsonl.gz, IN's servers.jsonl.gz and
candidates_remotes.jsonl, and SHA256SUMS; no truth.json, so `run` gives it a
release report. BENCH.md ("The near-miss census") times `run` against
`gzip -dc` on the variants of the near-miss census.

Variants:
  same        nothing changed: IN as CPython writes it (the baseline)
  escapes     accented letters in 30% of property names and in most
              descriptions, an emoji, CJK or Cyrillic word after them, all
              written as \\uXXXX escapes (surrogate pairs for the emoji), as
              json.dumps writes by default
  utf8        the same text written as UTF-8 (ensure_ascii=False)
  ref         the first two properties of each schema moved into
              "definitions" and replaced by a "$ref" to them
  keywords    30% of property names replaced by JSON Schema keywords
              ("properties", "type", "items", ...)
  numbers     60% of properties given a float or big-integer "minimum" and
              a float "default"
  enum        30% of properties given an enum of 3 to 29 strings
  anyof       half the properties wrapped in a nested anyOf fan-out
  pydantic    the shape pydantic writes: a "title" on every property and
              schema, Optional fields as anyOf [..., null] with
              "default": null, some properties as a "$ref" to a "$defs" model
  newlines    descriptions with quotes, newlines and tabs (ASCII escapes)
  prop-names  80% of property names made distinct (a random number added)
  prop-descs  every property description made distinct
  tool-names  every tool name made distinct (a random number added)
  counters    every tool name numbered, half the property names given one of
              100 suffixes: distinct, but compressible
  flat        one line a tool, the tool object itself with its record's
              other members (server_id ...) in front: the flat record shape,
              whose tools the decoder does not tape
"""
import gzip
import hashlib
import json
import os
import random
import shutil
import sys

ACCENTS = str.maketrans({"a": "á", "e": "é", "o": "ö", "u": "ü", "i": "í", "n": "ñ", "c": "ç"})
WORDS = ["\U0001F600", "\U0001F4A1", "\u2603", "\u00e9t\u00e9", "\u65e5\u672c\u8a9e", "\u0434\u0430\u043d\u043d\u044b\u0435"]
KEYWORDS = ["properties", "type", "items", "required", "description", "enum", "default", "anyOf", "$ref", "title"]
VARIANTS = ("same", "escapes", "utf8", "ref", "keywords", "numbers", "enum", "anyof", "pydantic",
            "newlines", "prop-names", "prop-descs", "tool-names", "counters", "flat")


def each_property(schema, f):
    """Call f(props, name) for every entry of every "properties" object
    under schema (through properties, items, definitions, $defs, anyOf,
    oneOf, allOf), before walking into the entry."""
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for name in list(props):
            f(props, name)
        for v in list(props.values()):
            each_property(v, f)
    items = schema.get("items")
    if isinstance(items, dict):
        each_property(items, f)
    for key in ("definitions", "$defs"):
        defs = schema.get(key)
        if isinstance(defs, dict):
            for d in defs.values():
                each_property(d, f)
    for key in ("anyOf", "oneOf", "allOf"):
        lst = schema.get(key)
        if isinstance(lst, list):
            for d in lst:
                each_property(d, f)


class Rewriter:
    def __init__(self, variant):
        self.variant = variant
        self.rng = random.Random(7)
        self.tools = 0

    def rename(self, props, old, new):
        props[new] = props.pop(old)

    def tool(self, t):
        v, rng, s = self.variant, self.rng, t.get("inputSchema")

        def described(prop):
            return isinstance(prop, dict) and isinstance(prop.get("description"), str)

        if v in ("escapes", "utf8"):
            if isinstance(t.get("description"), str) and rng.random() < 0.7:
                t["description"] = t["description"].translate(ACCENTS) + " " + rng.choice(WORDS)

            def f(props, name):
                if described(props[name]):
                    props[name]["description"] = props[name]["description"].translate(ACCENTS) + " " + rng.choice(WORDS)
                if rng.random() < 0.3:
                    self.rename(props, name, name.translate(ACCENTS))
            each_property(s, f)
        elif v == "ref":
            if isinstance(s, dict) and isinstance(s.get("properties"), dict) and isinstance(s.get("definitions", {}), dict):
                defs = s.setdefault("definitions", {})
                for name in list(s["properties"])[:2]:
                    defs[name + "Def"] = s["properties"][name]
                    s["properties"][name] = {"$ref": "#/definitions/" + name + "Def"}
        elif v == "keywords":
            def f(props, name):
                if rng.random() < 0.3:
                    self.rename(props, name, rng.choice(KEYWORDS))
            each_property(s, f)
        elif v == "numbers":
            def f(props, name):
                if isinstance(props[name], dict) and rng.random() < 0.6:
                    props[name]["minimum"] = rng.choice([0, -1e-3, 1.5e10, 0.1, 3.14159, 2**63, 1e308])
                    props[name]["default"] = rng.random() * rng.choice([1, 1000, 1e-5])
            each_property(s, f)
        elif v == "enum":
            def f(props, name):
                if isinstance(props[name], dict) and rng.random() < 0.3:
                    props[name]["enum"] = ["opt_%d" % i for i in range(rng.randrange(3, 30))]
            each_property(s, f)
        elif v == "anyof":
            def f(props, name):
                p = props[name]
                if isinstance(p, dict) and rng.random() < 0.5:
                    props[name] = {"anyOf": [dict(p), {"type": "null"},
                                             {"anyOf": [{"type": "string"}, {"type": "array", "items": dict(p)}]}]}
            each_property(s, f)
        elif v == "pydantic":
            if isinstance(s, dict) and isinstance(s.get("properties"), dict):
                props = s["properties"]
                for name in list(props):
                    p = props[name]
                    if not isinstance(p, dict):
                        continue
                    p["title"] = name.replace("_", " ").title().replace(" ", "")
                    r = rng.random()
                    if r < 0.3:
                        props[name] = {"anyOf": [p, {"type": "null"}], "default": None, "title": p["title"]}
                    elif r < 0.45 and isinstance(s.get("$defs", {}), dict):
                        model = p["title"] + "Model"
                        s.setdefault("$defs", {})[model] = {
                            "type": "object", "title": model, "required": ["kind"],
                            "properties": {name + "_value": dict(p), "kind": {"type": "string", "title": "Kind"}}}
                        props[name] = {"$ref": "#/$defs/" + model}
                s.setdefault("title", str(t.get("name") or "x") + "Arguments")
        elif v == "newlines":
            if isinstance(t.get("description"), str):
                t["description"] = t["description"].replace(" a ", '\n\t"a" ') + "\n"

            def f(props, name):
                if described(props[name]):
                    props[name]["description"] = '"' + props[name]["description"] + '"\n'
            each_property(s, f)
        elif v == "prop-names":
            def f(props, name):
                if rng.random() < 0.8:
                    self.rename(props, name, name + rng.choice(["_", "-", ""]) + str(rng.randrange(100000)))
            each_property(s, f)
        elif v == "prop-descs":
            def f(props, name):
                if isinstance(props[name], dict):
                    props[name]["description"] = (props[name].get("description") or name) + " " + str(rng.randrange(1000000))
            each_property(s, f)
        elif v == "tool-names":
            t["name"] = str(t.get("name") or "x") + "_" + str(rng.randrange(10**6))
        elif v == "counters":
            t["name"] = str(t.get("name") or "x") + "_" + str(self.tools)

            def f(props, name):
                if rng.random() < 0.5:
                    self.rename(props, name, name + "_" + str(rng.randrange(100)))
            each_property(s, f)
        self.tools += 1


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in VARIANTS:
        raise SystemExit("usage: variants.py IN OUT VARIANT (one of %s)" % ", ".join(VARIANTS))
    inp, out, variant = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    rw = Rewriter(variant)
    src = os.path.join(inp, "server_tools.jsonl.gz")
    dst = os.path.join(out, "server_tools.jsonl.gz")
    ascii_only = variant not in ("same", "utf8")
    with gzip.open(src, "rt", encoding="utf-8") as f, gzip.GzipFile(dst + ".tmp", "wb", compresslevel=9, mtime=0) as g:
        for n, line in enumerate(f, 1):
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise SystemExit(f"{src}:{n}: {e}")
            if isinstance(rec, dict) and isinstance(rec.get("tools"), list):
                for t in rec["tools"]:
                    if isinstance(t, dict):
                        rw.tool(t)
            recs = [rec]
            if variant == "flat" and isinstance(rec, dict) and isinstance(rec.get("tools"), list):
                ids = {k: v for k, v in rec.items() if k != "tools"}
                recs = [dict(ids, **t) for t in rec["tools"] if isinstance(t, dict)]
            for r in recs:
                # surrogatepass keeps a lone surrogate of IN as IN had it.
                g.write((json.dumps(r, ensure_ascii=ascii_only) + "\n").encode("utf-8", "surrogatepass"))
    os.replace(dst + ".tmp", dst)
    names = ("server_tools.jsonl.gz", "servers.jsonl.gz", "candidates_remotes.jsonl")
    for name in names[1:]:
        shutil.copyfile(os.path.join(inp, name), os.path.join(out, name))
    with open(os.path.join(out, "SHA256SUMS.tmp"), "w") as f:
        for name in names:
            with open(os.path.join(out, name), "rb") as r:
                h = hashlib.sha256()
                for block in iter(lambda: r.read(1 << 20), b""):
                    h.update(block)
                f.write("%s  %s\n" % (h.hexdigest(), name))
    os.replace(os.path.join(out, "SHA256SUMS.tmp"), os.path.join(out, "SHA256SUMS"))


if __name__ == "__main__":
    main()
