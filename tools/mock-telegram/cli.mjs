// The mock Bot API as a process of its own, for tests whose driver blocks node's
// event loop (the pty tests): prints one JSON line {"url": ...} once listening,
// runs until killed.
//   node tools/mock-telegram/cli.mjs --token TOKEN [--delay METHOD=MS ...] [--hold METHOD=FILE ...]
// --hold answers METHOD's next call only once FILE exists (a test creates it when
// it is ready: an order, not a guess at how long the other side takes).
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startMockTelegram } from './index.mjs';

const HOLD_POLL_MS = 20;
const { values } = parseArgs({ options: { token: { type: 'string' }, delay: { type: 'string', multiple: true }, hold: { type: 'string', multiple: true } } });
const tg = await startMockTelegram({ token: values.token });
for (const spec of values.delay ?? []) {
  const [method, ms] = spec.split('=');
  tg.fault(method, { delayMs: Number(ms) });
}
for (const spec of values.hold ?? []) {
  const [method, file] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
  const hold = new Promise((resolve) => {
    const timer = setInterval(() => { if (existsSync(file)) { clearInterval(timer); resolve(); } }, HOLD_POLL_MS);
  });
  tg.fault(method, { hold });
}
process.stdout.write(`${JSON.stringify({ url: tg.url })}\n`);
process.on('SIGTERM', () => tg.close().then(() => process.exit(0)));
