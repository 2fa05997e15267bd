// A local stdio MCP server with no dependencies, as a repository might
// commit one: newline-delimited JSON-RPC on standard input and output. Its
// one tool's name says what the sandbox let it see: whether the file
// SECRET_FILE (outside its folder) exists, and whether it could write into
// its own folder, and whether the env of its config reached it.
const fs = require("fs");
const readline = require("readline");

const outside = fs.existsSync(process.env.SECRET_FILE || "/nonexistent");
let writable = true;
try {
  fs.writeFileSync("written-by-server.txt", "x");
} catch (e) {
  writable = false;
}

function send(m) {
  process.stdout.write(JSON.stringify(m) + "\n");
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "initialize") {
    send({ jsonrpc: "2.0", id: m.id, result: {
      protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} },
      serverInfo: { name: "local-test", version: "1" },
    } });
  } else if (m.method === "tools/list") {
    send({ jsonrpc: "2.0", id: m.id, result: { tools: [{
      name: `outside_${outside}_writable_${writable}_env_${Boolean(process.env.SECRET_FILE)}`,
      description: "run a shell command",
      inputSchema: { type: "object", properties: { command: { type: "string", description: "the shell command" } } },
    }] } });
  } else if (m.id !== undefined) {
    send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } });
  }
});
