// Mock LLM server speaking the OpenAI Chat Completions and Anthropic Messages protocols,
// with scripted replies and transport faults, for the firmware's end-to-end tests.
//
// Scenarios (FIFO; when the queue is empty every request gets DEFAULT_SCENARIO):
//   {type: 'text', text}
//   {type: 'tool_calls', calls: [{id?, name, arguments: object}], text?}
//   {type: 'thinking', thinking, text?, signature?}
// each with optional `usage: {input_tokens, output_tokens}` (defaults estimate ~4 bytes a
// token), `chunk` (code points per streamed delta, default 8) and `raw: {MARKER: bytes}`
// (each MARKER in the rendered body is sent as those bytes, valid UTF-8 or not; keep a
// marker within one delta: a chunk as long as the text).
// A scenario with `fault` fails instead, using the reply above where it sends one:
//   'stall'      headers, then nothing until the client or close() ends the connection
//   'drop'       the first `afterBytes` (default half) of the body, then the socket is destroyed
//   'malformed'  truncated JSON body; when streaming, a truncated JSON in the second SSE frame
//   'huge'       a valid text reply of exactly `bytes` bytes (default 4 MiB)
//   'trickle'    `chunkBytes` (default 16) every `intervalMs` (default 50) until the client closes
//   429, 500, …  (number or string) that status with the API's error JSON and `message`;
//                `retry-after: retryAfter` seconds (default 1 for 429, else only when given)
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import * as openai from './openai.mjs';
import * as anthropic from './anthropic.mjs';

const PROTOCOLS = [openai, anthropic];
export const DEFAULT_SCENARIO = Object.freeze({ type: 'text', text: 'hello from mock' });
const TYPES = new Set(['text', 'tool_calls', 'thinking']);
const FAULTS = new Set(['stall', 'drop', 'malformed', 'huge', 'trickle']);
const HUGE_PIECE = 'x'.repeat(16 * 1024);
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6;

function checkScenario(s) {
  const fail = (why) => { throw new TypeError(`mock-llm scenario ${JSON.stringify(s)}: ${why}`); };
  const type = s?.type ?? 'text';
  if (!TYPES.has(type)) fail('unknown type');
  if (type === 'tool_calls' && !(Array.isArray(s.calls) && s.calls.length && s.calls.every((c) => c?.name))) {
    fail('calls must be a non-empty array of {name, arguments}');
  }
  if (type === 'thinking' && typeof s.thinking !== 'string') fail('thinking must be a string');
  if (s.fault !== undefined && !FAULTS.has(s.fault) && !/^[45]\d\d$/.test(String(s.fault))) fail('unknown fault');
  return s;
}

// Split by code points so that no delta carries half a surrogate pair.
function split(str, size) {
  const cps = Array.from(str);
  const out = [];
  for (let i = 0; i < cps.length; i += size) out.push(cps.slice(i, i + size).join(''));
  return out;
}

/** Scenario -> protocol-neutral reply whose strings are arrays of delta pieces. */
function toReply(s, inputTokens) {
  const size = s.chunk ?? 8;
  const text = s.text ?? ((s.type ?? 'text') === 'text' ? DEFAULT_SCENARIO.text : null);
  const calls = (s.calls ?? []).map((c) => ({ id: c.id, name: c.name, args: split(JSON.stringify(c.arguments ?? {}), size) }));
  const outChars = (text?.length ?? 0) + (s.thinking?.length ?? 0) + calls.reduce((n, c) => n + c.args.join('').length, 0);
  return {
    text: text == null ? null : split(text, size),
    thinking: s.thinking == null ? null : split(s.thinking, size),
    signature: s.signature,
    calls,
    usage: {
      input_tokens: s.usage?.input_tokens ?? inputTokens,
      output_tokens: s.usage?.output_tokens ?? Math.max(1, Math.ceil(outChars / 4)),
    },
  };
}

const render = (api, reply, ctx, stream) =>
  stream ? api.events(reply, ctx).join('') : JSON.stringify(api.message(reply, ctx));

/** A text reply whose rendered body is exactly `bytes` long. */
function hugeReply(api, ctx, stream, bytes) {
  const reply = (text) => ({ text, thinking: null, calls: [], usage: { input_tokens: ctx.inputTokens, output_tokens: Math.ceil(bytes / 4) } });
  const size = (text) => Buffer.byteLength(render(api, reply(text), ctx, stream));
  const base = size([]);
  const frame = size(['']) - base; // bytes a delta frame adds besides its text; 0 when not streaming
  const pieces = [];
  let left = bytes - base;
  while (left - (frame + HUGE_PIECE.length) >= frame + 1) {
    pieces.push(HUGE_PIECE);
    left -= frame + HUGE_PIECE.length;
  }
  if (left - frame < 1) throw new RangeError(`huge: ${bytes} bytes cannot hold a reply`);
  pieces.push('x'.repeat(left - frame));
  return reply(pieces);
}

/** body with every marker of raw replaced by its bytes. */
function withRaw(body, raw) {
  let out = body;
  for (const [marker, bytes] of Object.entries(raw ?? {})) {
    const b = Buffer.from(bytes);
    for (let at = out.indexOf(marker); at >= 0; at = out.indexOf(marker, at + b.length)) {
      out = Buffer.concat([out.subarray(0, at), b, out.subarray(at + marker.length)]);
    }
  }
  return out;
}

function malformed(api, reply, ctx, stream) {
  if (!stream) {
    const body = JSON.stringify(api.message(reply, ctx));
    return body.slice(0, body.length >> 1);
  }
  const frames = api.events(reply, ctx);
  const f = frames[1];
  const data = f.indexOf('data: ') + 6;
  frames[1] = `${f.slice(0, data + ((f.length - 2 - data) >> 1))}\n\n`;
  return frames.join('');
}

/**
 * @param {{tls?: {key, cert}, host?: string, port?: number, requireKey?: string,
 *          onRequest?: (record) => void, created?: number}} options
 *   requireKey: answer 401 unless the key comes as `Authorization: Bearer` (OpenAI paths)
 *   or `x-api-key` / bearer (Anthropic paths). onRequest: called with each new request record.
 *   created: the `created` second of every OpenAI reply (default: the clock), so that two
 *   runs of one script get byte-identical replies (the peer comparison's check).
 * @returns {{port, url, requests, connections, pending, script(...scenarios), close()}}
 *   Each record in `requests`: {seq, conn (connection id), method, path, headers, body (raw
 *   string), json, protocol ('openai' | 'anthropic' | null), stream, scenario,
 *   response: {status, bytes, complete, aborted, receivedAt, closedAt, sha256}}; `response` is
 *   updated as it is written; sha256 (hex) is the digest of a scripted reply's whole body. receivedAt (the request body was read) and closedAt (the
 *   response ended or its connection closed; null until then) are CLOCK_MONOTONIC
 *   milliseconds, the clock of the lin host's now(), so the two can be subtracted.
 */
export async function startMockLLM({ tls, host = '127.0.0.1', port = 0, requireKey, onRequest, created } = {}) {
  const queue = [];
  const requests = [];
  const connIds = new WeakMap();
  const sockets = new Set();
  let connections = 0;

  const server = tls ? https.createServer({ key: tls.key, cert: tls.cert }) : http.createServer();
  // Longer than Node's 5 s default, closer to real APIs, so keep-alive reuse is testable.
  server.keepAliveTimeout = 30_000;
  // For TLS count completed handshakes: req.socket is then the TLSSocket.
  server.on(tls ? 'secureConnection' : 'connection', (socket) => connIds.set(socket, ++connections));
  // Raw sockets, so close() also ends those still in a TLS handshake.
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('request', async (req, res) => {
    const chunks = [];
    try {
      for await (const chunk of req) chunks.push(chunk);
    } catch {
      return; // the client went away while sending
    }
    handle(req, res, Buffer.concat(chunks).toString('utf8'));
  });

  function write(res, rec, data, cb) {
    rec.response.bytes += data.length;
    res.write(data, cb);
  }

  function end(res, rec, data) {
    rec.response.bytes += data.length;
    res.end(data);
  }

  function sendJson(res, rec, status, body, headers = {}) {
    const payload = Buffer.from(JSON.stringify(body));
    rec.response.status = status;
    res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': payload.length });
    end(res, rec, payload);
  }

  function handle(req, res, body) {
    const path = new URL(req.url, 'http://mock').pathname;
    const proto = PROTOCOLS.find((p) => p.matches(path));
    const rec = {
      seq: requests.length + 1,
      conn: connIds.get(req.socket),
      method: req.method,
      path,
      headers: req.headers,
      body,
      json: undefined,
      protocol: proto?.name ?? null,
      stream: false,
      scenario: null,
      response: { status: 0, bytes: 0, complete: false, aborted: false, receivedAt: monotonicMs(), closedAt: null, sha256: null },
    };
    requests.push(rec);
    res.on('finish', () => { rec.response.complete = true; });
    res.on('close', () => {
      rec.response.aborted = !res.writableFinished;
      rec.response.closedAt = monotonicMs();
    });
    onRequest?.(rec);

    const api = proto ?? openai; // unknown paths answer in OpenAI's error format
    const fail = (status, message) => sendJson(res, rec, status, api.errorBody(status, message, rec.seq), api.requestIdHeader(rec.seq));
    if (!proto || req.method !== 'POST') return fail(404, `Unknown request URL: ${req.method} ${path}`);
    if (requireKey !== undefined && !api.authorized(req.headers, requireKey)) return fail(401, 'Incorrect API key provided.');
    try {
      rec.json = JSON.parse(body);
    } catch {
      return fail(400, 'We could not parse the JSON body of your request.');
    }
    if (typeof rec.json !== 'object' || rec.json === null) return fail(400, 'The request body must be a JSON object.');
    const invalid = api.validate(rec.json);
    if (invalid) return fail(400, invalid);

    rec.stream = rec.json.stream === true;
    rec.scenario = queue.shift() ?? DEFAULT_SCENARIO;
    try {
      respond(api, rec, res);
    } catch (err) {
      // A scenario the mock cannot honour is a test bug: make it loud.
      if (!res.headersSent) fail(500, `mock-llm: ${err.message}`);
      else res.destroy();
    }
  }

  function respond(api, rec, res) {
    const s = rec.scenario;
    const { stream } = rec;
    const ctx = {
      seq: rec.seq,
      model: rec.json.model,
      created: created ?? Math.floor(Date.now() / 1000),
      includeUsage: rec.json.stream_options?.include_usage === true,
      inputTokens: Math.ceil(Buffer.byteLength(rec.body) / 4),
    };
    const fault = s.fault === undefined ? null : String(s.fault);

    if (/^\d+$/.test(fault)) {
      const status = Number(fault);
      const headers = api.requestIdHeader(rec.seq);
      if (status === 429 || s.retryAfter !== undefined) headers['retry-after'] = String(s.retryAfter ?? 1);
      return sendJson(res, rec, status, api.errorBody(status, s.message ?? `mock ${status} fault`, rec.seq), headers);
    }

    const headers = {
      ...api.requestIdHeader(rec.seq),
      'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json',
    };
    if (stream) headers['cache-control'] = 'no-cache';
    rec.response.status = 200;
    if (fault === 'stall') {
      res.writeHead(200, headers);
      res.flushHeaders();
      return;
    }

    const reply = fault === 'huge' ? hugeReply(api, ctx, stream, s.bytes ?? 4 * 1024 * 1024) : toReply(s, ctx.inputTokens);
    const payload = withRaw(Buffer.from(fault === 'malformed' ? malformed(api, reply, ctx, stream) : render(api, reply, ctx, stream)), s.raw);
    rec.response.sha256 = createHash('sha256').update(payload).digest('hex');
    if (!stream) headers['content-length'] = payload.length;
    res.writeHead(200, headers);

    if (fault === 'drop') {
      write(res, rec, payload.subarray(0, s.afterBytes ?? payload.length >> 1), () => res.socket?.destroy());
    } else if (fault === 'trickle') {
      const { intervalMs = 50, chunkBytes = 16 } = s;
      let offset = 0;
      let timer;
      const tick = () => {
        const piece = payload.subarray(offset, (offset += chunkBytes));
        if (offset >= payload.length) return end(res, rec, piece);
        write(res, rec, piece);
        timer = setTimeout(tick, intervalMs);
      };
      res.on('close', () => clearTimeout(timer));
      tick();
    } else {
      end(res, rec, payload);
    }
  }

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const actualPort = server.address().port;

  return {
    port: actualPort,
    url: `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    requests,
    /** TCP connections accepted; over TLS, handshakes completed. */
    get connections() { return connections; },
    /** Scenarios scripted but not yet consumed. */
    get pending() { return queue.length; },
    /** Queue scenarios (objects or arrays of them); returns the mock for chaining. */
    script(...scenarios) {
      for (const s of scenarios.flat()) queue.push(checkScenario(s));
      return this;
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy(); // idle, stalled and trickling alike
      });
    },
  };
}
