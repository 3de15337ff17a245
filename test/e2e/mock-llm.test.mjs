// Checks the mock LLM server against the official SDK clients (and raw node:http where
// the SDKs cannot observe a fault), so a mock bug cannot hide a firmware bug.
// Loopback only; every test has its own mock and a timeout.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_SCENARIO, startMockLLM } from '../../tools/mock-llm/index.mjs';
import { makeTestCA } from '../../tools/testca.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// Bounds for events, not speed targets: generous, as the machine may be loaded.
const T = { timeout: 120_000 };
const WAIT_MS = 60_000;
const USER = [{ role: 'user', content: 'hi' }];
const CALLS = [
  { name: 'get_weather', arguments: { city: 'Paris', units: 'c' } },
  { id: 'call_given', name: 'read_file', arguments: { path: '/spiffs/ünï 😀.txt', lines: [1, 2] } },
];
const LONG = 'lorem ipsum dolor sit amet '.repeat(40);

async function mockFor(t, options) {
  const mock = await startMockLLM(options);
  t.after(() => mock.close());
  return mock;
}

const oai = (mock, extra) =>
  new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0, timeout: WAIT_MS, ...extra });
const ant = (mock, extra) =>
  new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0, timeout: WAIT_MS, ...extra });
const oaParams = (extra) => ({ model: 'gpt-test', messages: USER, ...extra });
const anParams = (extra) => ({ model: 'claude-test', max_tokens: 1024, messages: USER, ...extra });

async function until(cond, what, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** POST with node:http(s); resolves when the response closes, however it ends. */
function rawPost(url, json, { ca, agent = false, onResponse, onData } = {}) {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(json);
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.request(url, {
      method: 'POST',
      ca,
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      onResponse?.(res, req);
      res.on('data', (c) => { chunks.push(c); onData?.(c, req); });
      res.on('error', () => {}); // an early end shows as complete === false
      res.on('close', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const parseSSE = (text) => text.split('\n\n').filter(Boolean).map((frame) => {
  const data = frame.split('\n').find((l) => l.startsWith('data: ')).slice(6);
  return data === '[DONE]' ? data : JSON.parse(data);
});

describe('OpenAI SDK', () => {
  it('non-streaming text, with usage and the request recorded', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'text', text: 'Bonjour 👋', usage: { input_tokens: 11, output_tokens: 7 } });
    const r = await oai(mock).chat.completions.create(oaParams());
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.model, 'gpt-test');
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.equal(r.choices[0].message.content, 'Bonjour 👋');
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.deepEqual([r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens], [11, 7, 18]);

    const [rec] = mock.requests;
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/v1/chat/completions');
    assert.equal(rec.protocol, 'openai');
    assert.equal(rec.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(JSON.parse(rec.body), rec.json);
    assert.deepEqual(rec.json.messages, USER);
    assert.equal(rec.conn, 1);
    assert.equal(rec.response.status, 200);
    assert.ok(rec.response.complete);
  });

  it('non-streaming parallel tool calls', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'tool_calls', calls: CALLS });
    const r = await oai(mock).chat.completions.create(oaParams());
    const msg = r.choices[0].message;
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    assert.equal(msg.content, null);
    assert.equal(msg.tool_calls.length, 2);
    assert.match(msg.tool_calls[0].id, /^call_/);
    assert.equal(msg.tool_calls[1].id, 'call_given');
    msg.tool_calls.forEach((tc, i) => {
      assert.equal(tc.type, 'function');
      assert.equal(tc.function.name, CALLS[i].name);
      assert.deepEqual(JSON.parse(tc.function.arguments), CALLS[i].arguments);
    });
  });

  it('streaming text assembles, with the usage chunk and [DONE]', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'text', text: LONG, usage: { input_tokens: 5, output_tokens: 3 } });
    const stream = oai(mock).chat.completions.stream(oaParams({ stream_options: { include_usage: true } }));
    let deltas = 0;
    stream.on('content', () => deltas++);
    const r = await stream.finalChatCompletion();
    assert.equal(r.choices[0].message.content, LONG);
    assert.equal(r.choices[0].finish_reason, 'stop');
    assert.equal(r.usage.total_tokens, 8);
    assert.ok(deltas > 10, 'text arrives in many deltas');
    assert.equal(mock.requests[0].json.stream, true);

    const raw = await rawPost(`${mock.url}/v1/chat/completions`, oaParams({ stream: true }));
    assert.match(raw.headers['content-type'], /^text\/event-stream/);
    const frames = parseSSE(raw.body.toString());
    assert.equal(frames.at(-1), '[DONE]');
    assert.ok(frames.slice(0, -1).every((f) => f.object === 'chat.completion.chunk' && !('usage' in f)));
  });

  it('streaming parallel tool calls assemble to the scripted arguments', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'tool_calls', calls: CALLS, chunk: 3 });
    const r = await oai(mock).chat.completions.stream(oaParams()).finalChatCompletion();
    const calls = r.choices[0].message.tool_calls;
    assert.equal(r.choices[0].finish_reason, 'tool_calls');
    assert.deepEqual(calls.map((c) => c.function.name), CALLS.map((c) => c.name));
    assert.deepEqual(calls.map((c) => JSON.parse(c.function.arguments)), CALLS.map((c) => c.arguments));
    assert.equal(calls[1].id, 'call_given');
  });

  it('thinking as reasoning_content, streaming and not', T, async (t) => {
    const mock = await mockFor(t);
    const client = oai(mock);
    mock.script({ type: 'thinking', thinking: 'Let me think.', text: 'Done.' }, { type: 'thinking', thinking: LONG, text: 'Done.' });
    const r = await client.chat.completions.create(oaParams());
    assert.equal(r.choices[0].message.reasoning_content, 'Let me think.');
    assert.equal(r.choices[0].message.content, 'Done.');

    let reasoning = '';
    let content = '';
    for await (const chunk of await client.chat.completions.create(oaParams({ stream: true }))) {
      reasoning += chunk.choices[0]?.delta.reasoning_content ?? '';
      content += chunk.choices[0]?.delta.content ?? '';
    }
    assert.equal(reasoning, LONG);
    assert.equal(content, 'Done.');
  });
});

describe('Anthropic SDK', () => {
  it('non-streaming text, with usage and the request recorded', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'text', text: 'Bonjour 👋', usage: { input_tokens: 11, output_tokens: 7 } });
    const m = await ant(mock).messages.create(anParams());
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(m.model, 'claude-test');
    assert.deepEqual(m.content, [{ type: 'text', text: 'Bonjour 👋' }]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.deepEqual([m.usage.input_tokens, m.usage.output_tokens], [11, 7]);

    const [rec] = mock.requests;
    assert.equal(rec.path, '/v1/messages');
    assert.equal(rec.protocol, 'anthropic');
    assert.equal(rec.headers['x-api-key'], 'sk-ant-test');
    assert.equal(rec.headers['anthropic-version'], '2023-06-01');
    assert.equal(rec.json.max_tokens, 1024);
  });

  it('non-streaming parallel tool_use blocks', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'tool_calls', calls: CALLS, text: 'Checking.' });
    const m = await ant(mock).messages.create(anParams());
    assert.equal(m.stop_reason, 'tool_use');
    assert.deepEqual(m.content[0], { type: 'text', text: 'Checking.' });
    const uses = m.content.slice(1);
    assert.deepEqual(uses.map((b) => b.type), ['tool_use', 'tool_use']);
    assert.match(uses[0].id, /^toolu_/);
    assert.equal(uses[1].id, 'call_given');
    assert.deepEqual(uses.map((b) => [b.name, b.input]), CALLS.map((c) => [c.name, c.arguments]));
  });

  it('streaming text assembles, with pings and usage', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'text', text: LONG, usage: { input_tokens: 5, output_tokens: 3 } });
    const stream = ant(mock).messages.stream(anParams());
    let deltas = 0;
    stream.on('text', () => deltas++);
    const m = await stream.finalMessage();
    assert.deepEqual(m.content, [{ type: 'text', text: LONG }]);
    assert.equal(m.stop_reason, 'end_turn');
    assert.deepEqual([m.usage.input_tokens, m.usage.output_tokens], [5, 3]);
    assert.ok(deltas > 10, 'text arrives in many deltas');

    const raw = await rawPost(`${mock.url}/v1/messages`, anParams({ stream: true }));
    const events = raw.body.toString().split('\n\n').filter(Boolean).map((f) => f.split('\n')[0]);
    assert.deepEqual(events.slice(0, 4), ['event: message_start', 'event: content_block_start', 'event: ping', 'event: content_block_delta']);
    assert.deepEqual(events.slice(-3), ['event: content_block_stop', 'event: message_delta', 'event: message_stop']);
  });

  it('streaming parallel tool_use blocks assemble to the scripted inputs', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ type: 'tool_calls', calls: CALLS, chunk: 3 });
    const stream = ant(mock).messages.stream(anParams());
    const partials = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const m = await stream.finalMessage();
    assert.equal(m.stop_reason, 'tool_use');
    assert.deepEqual(m.content.map((b) => [b.type, b.name, b.input]), CALLS.map((c) => ['tool_use', c.name, c.arguments]));
    assert.ok(partials.length > 10, 'arguments arrive as many input_json_delta fragments');
  });

  it('thinking blocks with a signature, streaming and not', T, async (t) => {
    const mock = await mockFor(t);
    const client = ant(mock);
    mock.script(
      { type: 'thinking', thinking: 'Let me think.', text: 'Done.', signature: 'sig123' },
      { type: 'thinking', thinking: LONG, text: 'Done.' },
    );
    const m = await client.messages.create(anParams());
    assert.deepEqual(m.content, [
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig123' },
      { type: 'text', text: 'Done.' },
    ]);

    const streamed = await client.messages.stream(anParams()).finalMessage();
    assert.equal(streamed.content[0].type, 'thinking');
    assert.equal(streamed.content[0].thinking, LONG);
    assert.ok(streamed.content[0].signature.length > 20);
    assert.deepEqual(streamed.content[1], { type: 'text', text: 'Done.' });
  });
});

describe('errors and faults', () => {
  it('429 carries retry-after and each API\'s error body', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 429, retryAfter: 3, message: 'slow down' }, { fault: '429' });
    await assert.rejects(oai(mock).chat.completions.create(oaParams()), (e) => {
      assert.ok(e instanceof OpenAI.RateLimitError);
      assert.equal(e.headers.get('retry-after'), '3');
      assert.deepEqual([e.message, e.type, e.code], ['429 slow down', 'requests', 'rate_limit_exceeded']);
      return true;
    });
    await assert.rejects(ant(mock).messages.create(anParams()), (e) => {
      assert.ok(e instanceof Anthropic.RateLimitError);
      assert.equal(e.headers.get('retry-after'), '1');
      assert.equal(e.error.type, 'error');
      assert.equal(e.error.error.type, 'rate_limit_error');
      return true;
    });
    assert.deepEqual(mock.requests.map((r) => r.response.status), [429, 429]);
  });

  it('500 is a server error for both SDKs', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 500 }, { fault: 500 });
    await assert.rejects(oai(mock).chat.completions.create(oaParams()), (e) => e instanceof OpenAI.InternalServerError && e.type === 'server_error');
    await assert.rejects(ant(mock).messages.create(anParams()), (e) => e instanceof Anthropic.InternalServerError && e.error.error.type === 'api_error');
  });

  it('requireKey answers 401 without consuming a scenario', T, async (t) => {
    const mock = await mockFor(t, { requireKey: 'right' });
    mock.script({ type: 'text', text: 'a' }, { type: 'text', text: 'b' });
    await assert.rejects(oai(mock).chat.completions.create(oaParams()), OpenAI.AuthenticationError);
    await assert.rejects(ant(mock).messages.create(anParams()), Anthropic.AuthenticationError);
    assert.equal(mock.pending, 2);
    const r = await oai(mock, { apiKey: 'right' }).chat.completions.create(oaParams());
    const m = await ant(mock, { apiKey: 'right' }).messages.create(anParams());
    assert.deepEqual([r.choices[0].message.content, m.content[0].text], ['a', 'b']);
  });

  it('invalid requests get a 400 like the real APIs', T, async (t) => {
    const mock = await mockFor(t);
    await assert.rejects(
      ant(mock).messages.create(anParams({ messages: [{ role: 'tool', content: 'x' }] })),
      (e) => e instanceof Anthropic.BadRequestError && /messages\.0\.role/.test(e.message),
    );
    const raw = await rawPost(`${mock.url}/v1/chat/completions`, { model: 'm' });
    assert.equal(raw.status, 400);
    assert.equal(JSON.parse(raw.body).error.type, 'invalid_request_error');
    const unknown = await rawPost(`${mock.url}/v1/nothing`, {});
    assert.equal(unknown.status, 404);
  });

  it('default reply when nothing is scripted', T, async (t) => {
    const mock = await mockFor(t);
    const r = await oai(mock).chat.completions.create(oaParams());
    assert.equal(r.choices[0].message.content, DEFAULT_SCENARIO.text);
  });

  it('stall sends headers, then nothing', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 'stall' });
    const started = Date.now();
    const r = await rawPost(`${mock.url}/v1/chat/completions`, oaParams(), {
      onResponse: (_res, req) => setTimeout(() => req.destroy(), 300),
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 0);
    assert.equal(r.complete, false);
    assert.ok(Date.now() - started >= 290);
    await until(() => mock.requests[0].response.aborted, 'the server to see the close');
    assert.equal(mock.requests[0].response.bytes, 0);
  });

  it('drop ends the body early', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 'drop' }, { fault: 'drop', type: 'text', text: LONG });
    const r = await rawPost(`${mock.url}/v1/chat/completions`, oaParams());
    assert.equal(r.status, 200);
    assert.equal(r.complete, false);
    assert.equal(r.body.length, Math.floor(Number(r.headers['content-length']) / 2));

    const stream = await oai(mock).chat.completions.create(oaParams({ stream: true }));
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    });
    assert.ok(text.length < LONG.length);
  });

  it('malformed JSON and SSE data make the SDKs fail', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 'malformed' }, { fault: 'malformed' }, { fault: 'malformed' });
    const raw = await rawPost(`${mock.url}/v1/chat/completions`, oaParams());
    assert.equal(raw.status, 200);
    assert.throws(() => JSON.parse(raw.body), SyntaxError);
    const badJSON = (e) => /JSON/.test(e.message);
    const quiet = { logLevel: 'off' }; // the SDKs log the bad frame before throwing
    await assert.rejects(oai(mock, quiet).chat.completions.stream(oaParams()).finalChatCompletion(), badJSON);
    await assert.rejects(ant(mock, quiet).messages.stream(anParams()).finalMessage(), badJSON);
  });

  it('huge bodies have exactly the requested size and stay valid', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 'huge' }, { fault: 'huge', bytes: 300_000 }, { fault: 'huge', bytes: 200_000 });
    const r = await rawPost(`${mock.url}/v1/messages`, anParams());
    assert.equal(r.body.length, 4 * 1024 * 1024);
    assert.equal(Number(r.headers['content-length']), r.body.length);
    assert.match(JSON.parse(r.body).content[0].text, /^x+$/);

    const s = await rawPost(`${mock.url}/v1/chat/completions`, oaParams({ stream: true }));
    assert.equal(s.body.length, 300_000);
    const text = parseSSE(s.body.toString()).map((f) => f.choices?.[0]?.delta.content ?? '').join('');
    assert.match(text, /^x{250000,}$/);

    const m = await ant(mock).messages.stream(anParams()).finalMessage();
    assert.match(m.content[0].text, /^x{150000,}$/);
    assert.equal(mock.requests[2].response.bytes, 200_000);
  });

  it('trickle delivers slowly and stops when the client aborts', T, async (t) => {
    const mock = await mockFor(t);
    // Long enough that at full speed it would take over 20 s: the abort, not its end, stops it.
    mock.script({ fault: 'trickle', text: LONG.repeat(20), intervalMs: 20, chunkBytes: 16 });
    let first = 0;
    let abortedAt = 0;
    const requested = Date.now();
    const r = await rawPost(`${mock.url}/v1/chat/completions`, oaParams({ stream: true }), {
      onData: (_c, req) => {
        first ||= Date.now();
        if (!abortedAt && Date.now() - first >= 200) {
          abortedAt = Date.now();
          req.destroy();
        }
      },
    });
    assert.equal(r.complete, false);
    // Timers never fire early, so at most one chunk per interval since the request
    // was sent, plus the first (counted from the request, not from the first data,
    // which a busy event loop may see late and in one piece).
    assert.ok(r.body.length <= 16 * (Math.floor((abortedAt - requested) / 20) + 2), `${r.body.length} bytes too fast`);
    const rec = mock.requests[0];
    await until(() => rec.response.aborted, 'the server to see the abort');
    const sent = rec.response.bytes;
    await sleep(150);
    assert.equal(rec.response.bytes, sent, 'no writes after the client closed');
    assert.equal(rec.response.complete, false, 'the reply was cut short');
    assert.ok(sent > 0);
  });

  it('trickle can be aborted mid-stream through the SDK', T, async (t) => {
    const mock = await mockFor(t);
    mock.script({ fault: 'trickle', text: LONG, intervalMs: 10, chunkBytes: 64 });
    const stream = await ant(mock).messages.create(anParams({ stream: true }));
    let deltas = 0;
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && ++deltas === 2) stream.controller.abort();
    }
    const rec = mock.requests[0];
    await until(() => rec.response.aborted, 'the server to see the abort');
    const sent = rec.response.bytes;
    await sleep(100);
    assert.equal(rec.response.bytes, sent);
  });

  it('bad scenarios are refused when scripted', async () => {
    const mock = await startMockLLM();
    try {
      assert.throws(() => mock.script({ type: 'nope' }), TypeError);
      assert.throws(() => mock.script({ type: 'tool_calls', calls: [] }), TypeError);
      assert.throws(() => mock.script({ fault: 'explode' }), TypeError);
      assert.equal(mock.pending, 0);
    } finally {
      await mock.close();
    }
  });
});

describe('connections and TLS', () => {
  let dir;
  let ca;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'xsclaw-testca-'));
    ca = await makeTestCA(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keep-alive requests share a connection; ids tell connections apart', T, async (t) => {
    const mock = await mockFor(t);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.after(() => agent.destroy());
    for (let i = 0; i < 3; i++) await rawPost(`${mock.url}/v1/messages`, anParams(), { agent });
    await rawPost(`${mock.url}/v1/chat/completions`, oaParams({ stream: true }), { agent });
    await rawPost(`${mock.url}/v1/messages`, anParams());
    assert.deepEqual(mock.requests.map((r) => r.conn), [1, 1, 1, 1, 2]);
    assert.equal(mock.connections, 2);
    assert.ok(mock.requests.every((r) => r.response.complete));
  });

  it('makeTestCA makes the trusted, untrusted and wrong-host chains', T, () => {
    for (const p of Object.values(ca.paths)) assert.ok(existsSync(p), p);
    const root = new X509Certificate(ca.ca.pem);
    const server = new X509Certificate(ca.server.cert);
    const other = new X509Certificate(ca.other.cert);
    const wrong = new X509Certificate(ca.wrong.cert);
    assert.ok(root.ca);
    assert.ok(root.raw.equals(ca.ca.der));
    assert.ok(!server.ca);
    assert.ok(server.checkIssued(root) && server.verify(root.publicKey));
    assert.equal(server.checkHost('localhost'), 'localhost');
    assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
    assert.ok(!other.verify(root.publicKey));
    assert.ok(other.verify(new X509Certificate(ca.other.ca).publicKey));
    assert.ok(wrong.verify(root.publicKey));
    assert.equal(wrong.checkHost('localhost'), undefined);
    assert.equal(wrong.checkHost('wrong.example'), 'wrong.example');
    for (const pem of [ca.paths.ca, ca.paths.server]) {
      const text = execFileSync('openssl', ['x509', '-in', pem, '-noout', '-text']).toString();
      assert.match(text, /ecdsa-with-SHA256/);
      assert.match(text, /prime256v1/);
    }
  });

  it('HTTPS with the test CA, counting handshakes', T, async (t) => {
    const mock = await mockFor(t, { tls: ca.server });
    assert.match(mock.url, /^https:/);
    const agent = new https.Agent({ keepAlive: true, ca: ca.ca.pem });
    t.after(() => agent.destroy());
    for (let i = 0; i < 3; i++) {
      const r = await rawPost(`${mock.url}/v1/chat/completions`, oaParams(), { agent });
      assert.equal(JSON.parse(r.body).choices[0].message.content, DEFAULT_SCENARIO.text);
    }
    assert.equal(mock.connections, 1);
    await rawPost(`${mock.url}/v1/chat/completions`, oaParams(), { ca: ca.ca.pem });
    assert.equal(mock.connections, 2);
    assert.deepEqual(mock.requests.map((r) => r.conn), [1, 1, 1, 2]);
  });

  it('an untrusted CA or a wrong host name fail the handshake', T, async (t) => {
    const untrusted = await mockFor(t, { tls: ca.other });
    await assert.rejects(rawPost(`${untrusted.url}/v1/messages`, anParams(), { ca: ca.ca.pem }), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    const wrong = await mockFor(t, { tls: ca.wrong });
    await assert.rejects(rawPost(`${wrong.url}/v1/messages`, anParams(), { ca: ca.ca.pem }), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
    assert.equal(untrusted.requests.length + wrong.requests.length, 0);
  });

  it('both SDKs over HTTPS, trusting the CA through NODE_EXTRA_CA_CERTS', T, async (t) => {
    const mock = await mockFor(t, { tls: ca.server });
    mock.script({ type: 'text', text: 'over tls' }, { type: 'tool_calls', calls: CALLS });
    const child = `
      import OpenAI from 'openai';
      import Anthropic from '@anthropic-ai/sdk';
      const url = process.env.MOCK_URL;
      const o = new OpenAI({ apiKey: 'k', baseURL: url + '/v1', maxRetries: 0, timeout: 60000 });
      const a = new Anthropic({ apiKey: 'k', baseURL: url, maxRetries: 0, timeout: 60000 });
      const r = await o.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      const m = await a.messages.stream({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
      console.log(JSON.stringify([r.choices[0].message.content, m.content.map((b) => b.input)]));
    `;
    const { NODE_TEST_CONTEXT, ...env } = process.env; // the child is no test runner child
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', child], {
      cwd: ROOT,
      timeout: WAIT_MS,
      env: { ...env, MOCK_URL: mock.url, NODE_EXTRA_CA_CERTS: ca.paths.ca },
    });
    assert.deepEqual(JSON.parse(stdout), ['over tls', CALLS.map((c) => c.arguments)]);
  });
});
