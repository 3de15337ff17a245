// Run the mock LLM by hand:
//   node tools/mock-llm/cli.mjs [--port N] [--host H] [--tls-dir DIR] [--key KEY] [--tools]
// With --tls-dir it serves HTTPS with DIR/server.pem and DIR/server.key, making a test CA
// there first if they are missing (give the device DIR/ca.pem or DIR/ca.der).
// Every request gets the default text reply; each is logged to stderr. With --tools,
// a new question is answered with a call of the get_time tool (when the request
// offers it), and the tool's result with a text that quotes it: one tool round per
// question, to watch without an API key.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { makeTestCA } from '../testca.mjs';
import { startMockLLM } from './index.mjs';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'tls-dir': { type: 'string' },
    key: { type: 'string' },
    tools: { type: 'boolean', default: false },
  },
});

/** --tools: a get_time call for a new question, a text quoting the result after a tool round. */
function toolRound(record) {
  let body;
  try {
    body = JSON.parse(record.body); // onRequest comes before the mock parses it
  } catch {
    return { type: 'text' };
  }
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages.at(-1);
  const results = last?.role === 'tool' ? [last.content]
    : Array.isArray(last?.content) ? last.content.filter((b) => b.type === 'tool_result').map((b) => (typeof b.content === 'string' ? b.content : JSON.stringify(b.content))) : [];
  if (results.length) return { type: 'text', text: `The get_time tool answered: ${results.join(' ')}` };
  const offered = (body?.tools ?? []).some((t) => (t.function?.name ?? t.name) === 'get_time');
  return offered ? { type: 'tool_calls', text: 'Let me look at the clock.', calls: [{ name: 'get_time', arguments: {} }] } : { type: 'text', text: 'hello from mock (no get_time tool was offered)' };
}

let tls;
const dir = opts['tls-dir'];
if (dir) {
  const cert = join(dir, 'server.pem');
  const key = join(dir, 'server.key');
  if (!existsSync(cert) || !existsSync(key)) await makeTestCA(dir, { hosts: [...new Set(['localhost', '127.0.0.1', opts.host])] });
  tls = { cert: readFileSync(cert), key: readFileSync(key) };
}

const mock = await startMockLLM({
  tls,
  host: opts.host,
  port: Number(opts.port),
  requireKey: opts.key,
  onRequest: (r) => {
    console.error(`#${r.seq} conn ${r.conn} ${r.method} ${r.path} ${Buffer.byteLength(r.body)} bytes`);
    if (opts.tools) mock.script(toolRound(r));
  },
});
console.log(mock.url);
if (dir) console.log(`CA: ${join(dir, 'ca.pem')}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => mock.close().then(() => process.exit(0)));
}
