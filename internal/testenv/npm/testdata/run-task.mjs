// The TypeScript SDK 1.x client runs server-everything's task tool
// simulate-research-query at argv[2] to completion (tools/call with a
// task, tasks/get, tasks/result, as callToolStream drives them), then
// tasks/get and tasks/list of the finished task. It prints one JSON object:
// the message types in order, the final result, the task as tasks/get
// reports it and the number of tasks tasks/list lists.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const client = new Client({ name: 'run-task', version: '1' }, { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const types = [];
let result, taskId, error;
const stream = client.experimental.tasks.callToolStream(
  { name: 'simulate-research-query', arguments: { topic: 'interop', ambiguous: false } },
  undefined, { task: { ttl: 60000 } });
for await (const m of stream) {
  types.push(m.type);
  if (m.type === 'taskCreated') taskId = m.task.taskId;
  if (m.type === 'result') result = m.result;
  if (m.type === 'error') error = String(m.error);
}
const task = taskId ? await client.experimental.tasks.getTask(taskId) : undefined;
const listed = (await client.experimental.tasks.listTasks()).tasks.length;
await client.close();
console.log(JSON.stringify({ types, result, task, listed, error }));
