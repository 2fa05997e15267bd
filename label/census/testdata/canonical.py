#!/usr/bin/env python3
"""Reference for census.AppendCanonical: RFC 8785 (JCS) canonical JSON.

usage: canonical.py < LINES > CANONICAL_LINES

Reads JSON Lines on stdin (split on b"\\n" only, a final line without one
counted). Each line is decoded as strict UTF-8 and parsed by CPython's
json.loads, so that duplicate keys keep the last value and NaN, Infinity and
-Infinity are accepted; then it is written back as one line of RFC 8785
canonical JSON:

  - object members sorted by key as UTF-16 code units, no whitespace;
  - strings escaped as ES2019's well-formed JSON.stringify escapes them:
    '"', '\\\\', \\b \\f \\n \\r \\t, other control characters and lone
    surrogates as \\uxxxx in lowercase hex, every other character as itself;
  - numbers as ECMAScript's Number::toString of the double they round to
    (an int through float(); one beyond the double range, which float()
    refuses, is infinite like the float literal 1e400);
  - NaN, Infinity and -Infinity as those tokens.

A line json.loads (or the UTF-8 decoding) rejects prints "!" and the
exception's class name, e.g. "!JSONDecodeError"; a canonical line never
starts with "!". Output is UTF-8.
"""
import json
import math
import sys


def number(f):
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    # repr gives the shortest digits that read back as f.
    m, _, e = repr(abs(f)).partition("e")
    ip, _, fp = m.partition(".")
    digits = ip + fp
    n = len(ip) + (int(e) if e else 0)  # the point sits after n digits
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        s = digits + "0" * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        s = "0." + "0" * -n + digits
    else:
        x = n - 1
        s = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if x >= 0 else "-") + str(abs(x))
    return sign + s


ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def string(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in ESC:
            out.append(ESC[ch])
        elif o < 0x20 or 0xD800 <= o <= 0xDFFF:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(v):
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        try:
            return number(float(v))
        except OverflowError:
            return "Infinity" if v > 0 else "-Infinity"
    if isinstance(v, float):
        return number(v)
    if isinstance(v, str):
        return string(v)
    if isinstance(v, list):
        return "[" + ",".join(canonical(e) for e in v) + "]"
    items = sorted(v.items(), key=lambda kv: kv[0].encode("utf-16-be", "surrogatepass"))
    return "{" + ",".join(string(k) + ":" + canonical(x) for k, x in items) + "}"


def main():
    data = sys.stdin.buffer.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = sys.stdout.buffer
    limit = sys.getrecursionlimit()
    for raw in lines:
        try:
            value = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            out.write(b"!" + type(e).__name__.encode() + b"\n")
            continue
        # json.loads refuses nesting near the default limit; writing what
        # it accepted takes two frames a level.
        sys.setrecursionlimit(3 * limit)
        text = canonical(value)
        sys.setrecursionlimit(limit)
        out.write(text.encode("utf-8") + b"\n")


if __name__ == "__main__":
    main()
