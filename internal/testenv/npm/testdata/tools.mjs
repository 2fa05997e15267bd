// The tools both TypeScript test servers register: schemas with the
// parameters the five risk classes look for, declared with zod as the
// SDKs' own examples do.
import { z } from 'zod';

export const tools = [
  ['read_file', 'Read a file from disk.', { path: z.string().describe('Absolute path of the file'), encoding: z.enum(['utf8', 'base64']).optional() }],
  ['run_command', 'Run a shell command.', { command: z.string(), cwd: z.string().optional(), timeoutMs: z.number().int().min(1).optional() }],
  ['fetch_url', 'Fetch a URL.', { url: z.string().url(), headers: z.record(z.string(), z.string()).optional() }],
  ['transfer', 'Send money.', { amount: z.number().positive(), currency: z.string().length(3), api_key: z.string() }],
  ['echo', 'Echo a message.', { message: z.string(), times: z.array(z.number()).max(3).default([1]) }],
];

// register adds the tools to an McpServer of either SDK generation.
export function register(server) {
  for (const [name, description, shape] of tools) {
    server.registerTool(name, { description, inputSchema: z.object(shape) }, async () => ({ content: [{ type: 'text', text: name }] }));
  }
}

// listen serves handler on loopback, on a port the system picks, and
// prints it for the Go test ("PORT n").
export function listen(http, handler) {
  const srv = http.createServer(handler);
  srv.listen(0, '127.0.0.1', () => console.log(`PORT ${srv.address().port}`));
  process.on('SIGTERM', () => process.exit(0));
}
