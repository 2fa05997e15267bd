// Lists the tools of an npm server installed in a throwaway folder, run
// directly with node (no sandbox), as the TypeScript SDK's stdio client
// gets them: the reference make bench-packages sets the crawl's records
// beside. Prints one JSON line: {"tools": [names]} or {"error": text}.
//
// usage: node direct-tools.mjs SDK_NODE_MODULES ENTRY_JS
import path from "node:path";

const [modules, entry] = process.argv.slice(2);
const sdk = path.join(modules, "@modelcontextprotocol/sdk/dist/esm/client");
const { Client } = await import(path.join(sdk, "index.js"));
const { StdioClientTransport } = await import(path.join(sdk, "stdio.js"));
const { ListRootsRequestSchema } = await import(path.join(modules, "@modelcontextprotocol/sdk/dist/esm/types.js"));

const say = (o) => { console.log(JSON.stringify(o)); process.exit(0); };
setTimeout(() => say({ error: "no tool list within 60 s" }), 60000).unref();
const transport = new StdioClientTransport({
  command: process.execPath, args: [entry], stderr: "ignore",
  env: { PATH: process.env.PATH, HOME: process.env.HOME },
});
const client = new Client({ name: "atlas-reproduce-bench-direct", version: "1" }, { capabilities: { roots: { listChanged: true } } });
client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const r = await client.listTools(cursor ? { cursor } : {});
    tools.push(...r.tools.map((t) => t.name));
    cursor = r.nextCursor;
  } while (cursor);
  await client.close().catch(() => {});
  say({ tools: tools.sort() });
} catch (e) {
  await client.close().catch(() => {});
  say({ error: String(e && e.message ? e.message : e).slice(0, 200) });
}
