// The SDKs' own clients list the tools of servers: argv[2] is the client
// capabilities to declare (JSON; servers may list other tools to a client
// that declares roots), then pairs of a client generation and a URL: "v1"
// is the TypeScript SDK 1.x client, "v2" the v2 one (2026-07-28 first).
// It prints one JSON array of {"protocolVersion": ..., "tools": [...]},
// one per pair, in order: one process for all, as node starts slowly.
const [caps, ...pairs] = process.argv.slice(2);
const capabilities = JSON.parse(caps);

async function list(gen, url) {
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
  await client.close();
  return { protocolVersion, tools };
}

const out = [];
for (let i = 0; i < pairs.length; i += 2) out.push(await list(pairs[i], pairs[i + 1]));
console.log(JSON.stringify(out));
