#!/usr/bin/env python3
"""A minimal MCP server on the Python standard library alone, for the crawl's
interoperability test: Streamable HTTP with JSON responses, a session id,
the protocol-version header, and tools/list in two pages.

The tools are raw JSON text, sent verbatim inside pretty-printed responses,
so that a client which keeps what the server sent can be told from one that
re-encodes it: key order, an unknown field, a duplicate key, escapes and a
number literal survive only a verbatim copy.

    mcp_server.py          serve on 127.0.0.1, print "PORT <n>", run until killed
    mcp_server.py --dump   print the raw tools as a JSON list of strings
"""
import http.server
import json
import sys
import uuid

TOOLS = [
    """{
      "name": "read_file",
      "description": "Read a file from disk",
      "inputSchema": {"type": "object",
                      "properties": {"path": {"type": "string", "description": "old"},
                                     "path": {"type": "string", "description": "path of the file to read"}},
                      "required": ["path"]},
      "x-vendor": {"cost": 1.50}
    }""",
    """{"inputSchema": {"type": "object", "properties": {
         "api_key": {"type": "string", "description": "API key for caf\\u00e9 payments"},
         "amount": {"type": "number", "description": "amount to charge in USD"}}},
       "name": "charge", "annotations": {"destructiveHint": true}}""",
    """{"name": "run", "description": "run a shell command",
        "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}""",
]
PAGES = [TOOLS[:2], TOOLS[2:]]
SUPPORTED = ["2025-06-18", "2025-03-26"]
SESSIONS = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        SESSIONS.pop(self.headers.get("Mcp-Session-Id"), None)
        self.reply(204)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        try:
            msg = json.loads(body)
        except ValueError:
            return self.reply(400, b"not JSON")
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            asked = msg["params"]["protocolVersion"]
            version = asked if asked in SUPPORTED else SUPPORTED[-1]
            sid = uuid.uuid4().hex
            SESSIONS[sid] = version
            result = ('{\n  "protocolVersion": %s,\n  "capabilities": {"tools": {}},\n'
                      '  "serverInfo": {"name": "python-stdlib-mcp", "version": "0.1"}\n}' % json.dumps(version))
            return self.send_result(mid, result, [("Mcp-Session-Id", sid)])
        sid = self.headers.get("Mcp-Session-Id")
        if sid not in SESSIONS:
            return self.reply(400, b"missing or unknown Mcp-Session-Id")
        if self.headers.get("Mcp-Protocol-Version") != SESSIONS[sid]:
            return self.reply(400, b"missing or wrong MCP-Protocol-Version")
        if mid is None:
            return self.reply(202)
        if method == "tools/list":
            cursor = (msg.get("params") or {}).get("cursor")
            page = 1 if cursor == "page-2" else 0
            result = '{\n  "tools": [\n    %s\n  ]%s\n}' % (
                ",\n    ".join(PAGES[page]), ',\n  "nextCursor": "page-2"' if page == 0 else "")
            return self.send_result(mid, result)
        if method == "ping":
            return self.send_result(mid, "{}")
        err = json.dumps({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "method not found"}})
        self.reply(200, err.encode(), [("Content-Type", "application/json")])

    def send_result(self, mid, result, headers=()):
        body = '{\n  "jsonrpc": "2.0",\n  "id": %s,\n  "result": %s\n}\n' % (json.dumps(mid), result)
        self.reply(200, body.encode(), [("Content-Type", "application/json")] + list(headers))


def main():
    if sys.argv[1:] == ["--dump"]:
        print(json.dumps(TOOLS))
        return
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print("PORT %d" % srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
