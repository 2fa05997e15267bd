// The SDK's own client lists the tools of the server at argv[3]: "v1" is
// the TypeScript SDK 1.x client, "v2" the v2 one (2026-07-28 first),
// declaring the client capabilities of argv[4] (JSON; servers may list
// other tools to a client that declares roots). It prints
// {"protocolVersion": ..., "tools": [...]} as JSON.
const [gen, url, caps] = process.argv.slice(2);
const capabilities = caps ? JSON.parse(caps) : {};
let Client, Transport;
if (gen === 'v2') {
  ({ Client, StreamableHTTPClientTransport: Transport } = await import('@modelcontextprotocol/client'));
} else {
  ({ Client } = await import('@modelcontextprotocol/sdk/client/index.js'));
  ({ StreamableHTTPClientTransport: Transport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
}
// The v2 client speaks 2025 unless told to negotiate.
const options = { capabilities };
if (gen === 'v2') options.versionNegotiation = { mode: 'auto' };
const client = new Client({ name: 'list-tools', version: '1' }, options);
const transport = new Transport(new URL(url));
await client.connect(transport);
const tools = [];
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);
const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
console.log(JSON.stringify({ protocolVersion, tools }));
await client.close();
