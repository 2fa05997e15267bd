# A PyPI MCP server with no dependencies, for the config scan's tests:
# newline-delimited JSON-RPC over stdio. Its tools name its version, its
# arguments and the MODE variable, so that a test sees which version ran
# and what the config gave it.
import json, os, sys

VERSION = "%s"


def main():
    notes = ["version_" + VERSION.replace(".", "_"), "argv_" + "_".join(sys.argv[1:]), "mode_" + os.environ.get("MODE", "")]
    tools = [{"name": n, "inputSchema": {"type": "object"}} for n in notes]
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req:
            continue
        if req.get("method") == "initialize":
            res = {"protocolVersion": req["params"]["protocolVersion"], "capabilities": {"tools": {}},
                   "serverInfo": {"name": "tiny-time", "version": VERSION}}
        elif req.get("method") == "tools/list":
            res = {"tools": tools}
        else:
            print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
            continue
        print(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}), flush=True)
