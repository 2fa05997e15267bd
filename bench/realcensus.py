"""Write a census of real tool definitions resampled to a given size.

    python3 bench/realcensus.py OUT [--tools 229539] [--seed 7]

Every tool is a bundled real tool object (internal/realcorpus), its bytes as
served, drawn with replacement; servers hold 1 to 12 of them, as in the
pipeline's real-schema tests. A definition served by many servers is what
forks, mirrors and aggregators give a real census: 229,539 tools hold about
4,800 distinct definitions. OUT gets server_tools.jsonl.gz, servers.jsonl.gz,
candidates_remotes.jsonl and SHA256SUMS.
"""
import argparse
import gzip
import hashlib
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "internal", "realcorpus", "testdata", "real-mcp-tools", "tools.jsonl.gz")


def tool_text(line):
    """The tool object's bytes as they stand in the corpus line."""
    rec = json.loads(line)
    text = json.dumps(rec["tool"], ensure_ascii=False)
    # Keep the served bytes where they can be found verbatim.
    i = line.find('"tool": ')
    if i >= 0 and line.rstrip().endswith("}"):
        cand = line[i + len('"tool": '):].rstrip()[:-1].rstrip()
        try:
            if json.loads(cand) == rec["tool"]:
                return cand
        except ValueError:
            pass
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tools", type=int, default=229539)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    with gzip.open(CORPUS, "rt", encoding="utf-8") as f:
        tools = [tool_text(l) for l in f if l.strip()]
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    n, servers = 0, 0
    with gzip.open(os.path.join(a.out, "server_tools.jsonl.gz"), "wt", encoding="utf-8", compresslevel=6) as f:
        while n < a.tools:
            k = min(1 + rng.randrange(12), a.tools - n)
            f.write('{"server_id": "srv-%d", "tools": [%s]}\n' % (servers, ", ".join(rng.choice(tools) for _ in range(k))))
            n += k
            servers += 1
    with gzip.open(os.path.join(a.out, "servers.jsonl.gz"), "wt") as f:
        for i in range(servers):
            f.write('{"server_id": "srv-%d"}\n' % i)
    with open(os.path.join(a.out, "candidates_remotes.jsonl"), "w") as f:
        f.write('{"url": "https://example.invalid/mcp"}\n')
    with open(os.path.join(a.out, "SHA256SUMS"), "w") as s:
        for name in ("server_tools.jsonl.gz", "servers.jsonl.gz", "candidates_remotes.jsonl"):
            with open(os.path.join(a.out, name), "rb") as g:
                s.write("%s  %s\n" % (hashlib.sha256(g.read()).hexdigest(), name))


if __name__ == "__main__":
    main()
