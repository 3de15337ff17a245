// Run the mock LLM by hand:
//   node tools/mock-llm/cli.mjs [--port N] [--host H] [--tls-dir DIR] [--key KEY]
// With --tls-dir it serves HTTPS with DIR/server.pem and DIR/server.key, making a test CA
// there first if they are missing (give the device DIR/ca.pem or DIR/ca.der).
// Every request gets the default text reply; each is logged to stderr.
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
  },
});

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
  onRequest: (r) => console.error(`#${r.seq} conn ${r.conn} ${r.method} ${r.path} ${Buffer.byteLength(r.body)} bytes`),
});
console.log(mock.url);
if (dir) console.log(`CA: ${join(dir, 'ca.pem')}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => mock.close().then(() => process.exit(0)));
}
