// The TypeScript SDK 1.x client (revision 2025-11-25) answering sampling:
// argv[2] is the npm directory holding the SDK, argv[3] the tools to call
// (comma-separated; "sample" asks the client for a sampled message), then
// pairs of a kind and a target: "http URL", or "stdio PROGRAM|UPSTREAM"
// (the test binary as a stdio proxy in front of the URL UPSTREAM). For
// each it calls the tools, and prints one JSON array of
// {"protocolVersion", "text", "results"}: the text of the first call and
// every result the client received, as JSON text in the order it came.
// One process for all: node starts slowly.
import { pathToFileURL } from 'node:url';

const [npm, toolList, ...pairs] = process.argv.slice(2);
const toolNames = toolList.split(',');
const sdk = (p) => import(pathToFileURL(`${npm}/node_modules/@modelcontextprotocol/sdk/dist/esm/${p}`).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { CreateMessageRequestSchema } = await sdk('types.js');

async function run(kind, target) {
  const client = new Client({ name: 'ts1-sampling', version: '1' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
    model: 'm', role: 'assistant',
    content: { type: 'text', text: 'sampled ' + req.params.messages[0].content.text },
  }));
  const transport = kind === 'http'
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({
      command: target.split('|')[0], args: ['-test.run=^$'], stderr: 'inherit',
      env: { ...process.env, ATLAS_PROXY_TEST_STDIO_SERVER: 'proxy', ATLAS_PROXY_TEST_UPSTREAM: target.split('|')[1] },
    });
  await client.connect(transport);
  const results = [];
  const onmessage = transport.onmessage;
  transport.onmessage = (msg, extra) => {
    if ('result' in msg && msg.result && !('protocolVersion' in msg.result)) results.push(JSON.stringify(msg.result));
    onmessage?.(msg, extra);
  };
  let res;
  for (const name of toolNames) {
    // Arguments both servers' echo tools take.
    const r = await client.callTool({ name, arguments: name === 'echo' ? { text: 'x', message: 'x' } : {} });
    res ??= r;
  }
  const protocolVersion = transport.protocolVersion ?? null; // a stdio transport does not keep it
  if (kind === 'http') await transport.terminateSession(); // DELETE: the server's session ends too
  await client.close();
  return { protocolVersion, text: res.content?.[0]?.text ?? JSON.stringify(res), results };
}

const out = [];
for (let i = 0; i < pairs.length; i += 2) out.push(await run(pairs[i], pairs[i + 1]));
console.log(JSON.stringify(out));
