// A server of the TypeScript SDK v2 (2026-07-28): createMcpHandler, with
// legacy traffic rejected ("reject", the default of this script) or served
// statelessly ("stateless"), as argv[2] says.
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { register, listen } from './tools.mjs';

const legacy = process.argv[2] || 'reject';
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'ts-sdk-2', version: '2.4.0' });
  register(server);
  return server;
}, { legacy });
listen(http, toNodeHandler(handler));
