// The mock QQ platform as a process of its own (tools/mock-qq/index.mjs says what
// it does and how its control endpoint drives it): prints one JSON line
// {"url", "tokenUrl", "control"} once listening, runs until SIGTERM.
//   node tools/mock-qq/cli.mjs --app-id ID --secret SECRET [--expires-in S] [--heartbeat-ms MS] [--max-chars N]
import { parseArgs } from 'node:util';
import { startMockQQ } from './index.mjs';

const { values } = parseArgs({
  options: {
    'app-id': { type: 'string' }, secret: { type: 'string' }, 'expires-in': { type: 'string' },
    'heartbeat-ms': { type: 'string' }, 'max-chars': { type: 'string' },
  },
});
const number = (v) => (v === undefined ? undefined : Number(v));
const qq = await startMockQQ({
  appId: values['app-id'], secret: values.secret, expiresIn: number(values['expires-in']),
  heartbeatMs: number(values['heartbeat-ms']), maxChars: number(values['max-chars']),
});
process.stdout.write(`${JSON.stringify({ url: qq.url, tokenUrl: qq.tokenUrl, control: `${qq.url}/_mock/` })}\n`);
process.on('SIGTERM', () => qq.stop().then(() => process.exit(0)));
