// The mock Bot API as a process of its own, for tests whose driver blocks node's
// event loop (the pty tests): prints one JSON line {"url": ...} once listening,
// runs until killed.
//   node tools/mock-telegram/cli.mjs --token TOKEN [--delay METHOD=MS ...]
import { parseArgs } from 'node:util';
import { startMockTelegram } from './index.mjs';

const { values } = parseArgs({ options: { token: { type: 'string' }, delay: { type: 'string', multiple: true } } });
const tg = await startMockTelegram({ token: values.token });
for (const spec of values.delay ?? []) {
  const [method, ms] = spec.split('=');
  tg.fault(method, { delayMs: Number(ms) });
}
process.stdout.write(`${JSON.stringify({ url: tg.url })}\n`);
process.on('SIGTERM', () => tg.close().then(() => process.exit(0)));
