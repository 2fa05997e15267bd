#!/usr/bin/env node
// A minimal MCP server on stdio in plain Node.js (no packages): an upstream
// of another implementation than the Go SDK for the proxy's tests. Its
// tools are raw JSON text sent verbatim, so that a relay which re-encodes
// them can be told from one that keeps them: key order, an unknown field,
// a _meta of its own, an escape and a number literal.
//
//   node_server.js          serve on stdin/stdout, one JSON-RPC message a line
//   node_server.js --dump   print the raw tools as a JSON list of strings
'use strict';

const TOOLS = [
  '{"name":"write_file","inputSchema":{"type":"object","properties":{"file_path":{"type":"string","description":"where to write"},"content":{"type":"string"}},"required":["file_path"]},"_meta":{"vendor/x":{"n":1.50}},"x-unknown":true}',
  '{"inputSchema":{"type":"object","properties":{"endpoint":{"type":"string","description":"URL to fetch, caf\\u00e9"}}},"name":"fetch","annotations":{"readOnlyHint":true}}',
  '{"name":"ask","description":"ask the client for its roots","inputSchema":{"type":"object"}}',
];

if (process.argv[2] === '--dump') {
  process.stdout.write(JSON.stringify(TOOLS) + '\n');
  process.exit(0);
}

const send = (text) => process.stdout.write(text + '\n');
const result = (id, text) => send('{"jsonrpc":"2.0","id":' + JSON.stringify(id) + ',"result":' + text + '}');
const waiting = new Map(); // id of our request to the client -> the call waiting on it
let next = 0;

let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line.trim() !== '') handle(JSON.parse(line));
  }
});
process.stdin.on('end', () => process.exit(0));

function handle(msg) {
  if (msg.method === undefined) { // an answer to our request
    const callId = waiting.get(msg.id);
    waiting.delete(msg.id);
    const roots = msg.result ? msg.result.roots.map((r) => r.uri).join(',') : 'error';
    result(callId, JSON.stringify({content: [{type: 'text', text: roots}]}));
    return;
  }
  if (msg.id === undefined) return; // a notification
  switch (msg.method) {
    case 'initialize':
      return result(msg.id, JSON.stringify({protocolVersion: msg.params.protocolVersion,
        capabilities: {tools: {}}, serverInfo: {name: 'node-plain-mcp', version: '0.1'}}));
    case 'tools/list':
      return result(msg.id, '{"tools":[' + TOOLS.join(',') + ']}');
    case 'ping':
      return result(msg.id, '{}');
    case 'tools/call':
      if (msg.params.name === 'ask') {
        const id = 'node-' + (next++);
        waiting.set(id, msg.id);
        return send(JSON.stringify({jsonrpc: '2.0', id: id, method: 'roots/list', params: {}}));
      }
      return result(msg.id, '{"content":[{"type":"text","text":"done"}],"_meta":{"node/extra":[1,2.50]}}');
    default:
      return send(JSON.stringify({jsonrpc: '2.0', id: msg.id, error: {code: -32601, message: 'no ' + msg.method, data: {from: 'node'}}}));
  }
}
