// The TypeScript SDK v2 client (2026-07-28 first) calls the tool argv[3]
// with the arguments argv[4] (JSON) at the URL argv[2], asking for
// progress, and is cut off from the call's event stream after its second
// progress notification, as a broken connection would cut it: the client
// resumes by itself with Last-Event-ID. It prints one JSON object: the
// negotiated version, the progress values it got, the call's result (or
// error), the Last-Event-ID of each resumption and whether the cut came.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, tool, args] = process.argv.slice(2);
const resumes = [];
let cutDone = false;

// cutAfter passes a stream's text until the end of the event holding the
// n-th progress notification, then fails.
function cutAfter(body, n) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let seen = '';
  return new ReadableStream({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) { controller.close(); return; }
      const start = seen.length;
      seen += decoder.decode(value, { stream: true });
      let at = -1, from = 0;
      for (let i = 0; i < n; i++) {
        const j = seen.indexOf('notifications/progress', from);
        if (j < 0) { from = -1; break; }
        from = j + 1;
      }
      if (from >= 0) {
        const end = seen.indexOf('\n\n', from);
        if (end >= 0) at = end + 2;
      }
      if (at < 0) { controller.enqueue(encoder.encode(seen.slice(start))); return; }
      controller.enqueue(encoder.encode(seen.slice(start, at)));
      cutDone = true;
      reader.cancel().catch(() => {});
      controller.error(new Error('cut'));
    },
  });
}

let cutUsed = false;
async function cuttingFetch(input, init) {
  const headers = new Headers(init?.headers);
  if ((init?.method ?? 'GET') === 'GET' && headers.get('last-event-id')) resumes.push(headers.get('last-event-id'));
  const res = await fetch(input, init);
  const isCall = typeof init?.body === 'string' && init.body.includes('"tools/call"');
  if (!isCall || cutUsed || !res.body) return res;
  cutUsed = true;
  return new Response(cutAfter(res.body, 2), { status: res.status, statusText: res.statusText, headers: res.headers });
}

const client = new Client({ name: 'resume-call', version: '1' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  fetch: cuttingFetch,
  reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
});
await client.connect(transport);
const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
const progress = [];
let result, error;
try {
  result = await client.callTool({ name: tool, arguments: JSON.parse(args) }, {
    onprogress: (p) => progress.push(p.progress),
    timeout: 30000,
  });
} catch (e) {
  error = String(e);
}
await client.close();
console.log(JSON.stringify({ protocolVersion, progress, result, error, resumes, cut: cutDone }));
