// Mock QQ bot platform (API v2) for the firmware's tests, loopback only: the app
// access token endpoint, GET /gateway, the WebSocket gateway (on the `ws`
// package) with its opcodes and events, and the passive-reply endpoints, with
// faults and a record of everything it receives. The protocol as QQ documents
// it is in modules/main/channels/qq/NOTES.md.
//
//   const qq = await startMockQQ({ appId, secret, expiresIn?, heartbeatMs?, maxChars?, groupWindowMs?, c2cWindowMs? });
//   qq.url                   the OpenAPI base, for qq.api_url (GET /gateway and /gateway/bot)
//   qq.tokenUrl              the token endpoint, for qq.token_url
//   qq.say({ user, text })              a C2C message from user (an openid); resolves its message id
//   qq.say({ group, user, text })       a group @ message in group from member user
//   qq.sayRaw({ user, bytes })          a C2C message whose text is sent as these bytes (even invalid UTF-8)
//   qq.raw(t, d)             a dispatch with any (even malformed) d
//   qq.drop()                the live gateway socket is destroyed (no close frame); later events wait for a Resume
//   qq.reconnect()           sends op 7 Reconnect
//   qq.invalidSession()      sends op 9 Invalid Session (the session is forgotten: only Identify works then)
//   qq.close(code)           the gateway closes the live socket with that code
//   qq.expireTokens()        every token issued so far stops working (401) at once
//   qq.fault(what, spec, times=1)  what: "token" | "gateway" | "send"; spec: {status: 5xx | 401 ...}
//                            | {drop: true} (socket destroyed) | {delayMs}
//   qq.replayExtra = n       a Resume also replays the n events before the client's seq (QQ may repeat)
//   qq.record                { tokens: [{appId, ok, at}], gateways: [{token_ok}], connections,
//                              identify: [{token, intents, shard}], resume: [{session_id, seq}],
//                              heartbeats: [{d}], replies: [{chat, path, msg_id, msg_seq, content, token_ok, at, status}] }
//   qq.replies(chat)         accepted replies in a chat ("c2c:OPENID" or "group:GROUP_OPENID")
//   qq.waitFor(predicate, ms, what)  resolves when predicate() is truthy (checked on every event)
//   qq.stop()
//
// As a process (for tests whose driver blocks node's loop, and for load tests):
//   node tools/mock-qq/cli.mjs --app-id ID --secret SECRET [--expires-in S] [--heartbeat-ms MS]
// prints one JSON line {"url", "tokenUrl", "control"} once listening and runs until
// SIGTERM. The control endpoint (plain HTTP on the same port) drives it:
//   POST /_mock/say     {"user", "group"?, "text"}  -> {"id"}
//   POST /_mock/fault   {"what", "spec", "times"?} | {"action": "drop" | "reconnect" | "invalid_session" | "expire_tokens"}
//                       | {"action": "close", "code"}
//   GET  /_mock/record  the record above, as JSON
//
// QQ's rules it enforces (so a firmware bug shows): a wrong app id or secret
// gets 401 from the token endpoint; every OpenAPI call needs `Authorization:
// QQBot <token>` with a token not yet expired; Identify needs the token and the
// GROUP_AND_C2C_EVENT intent (1<<25) (else close 4014); Resume needs the session
// id and a seq it sent (else op 9); a reply needs msg_type 0, content of 1 to
// maxChars characters, a msg_id of a message in that chat, within the reply
// window (C2C 60 min, group 5 min unless set), at most 5 replies per msg_id,
// and a msg_seq not used before with that msg_id.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { waitFor } from '../waiters.mjs';

const GROUP_AND_C2C_EVENT = 1 << 25;
const EVENT_LOG_MAX = 1000;

export async function startMockQQ({
  appId = '102000001', secret = 'mock-qq-secret', expiresIn = 7200, heartbeatMs = 41250, maxChars = 2000,
  c2cWindowMs = 3_600_000, groupWindowMs = 300_000, host = '127.0.0.1',
} = {}) {
  const record = { tokens: [], gateways: [], connections: 0, identify: [], resume: [], heartbeats: [], replies: [], payloads: [] };
  const tokens = new Map();          // token -> expires at (ms)
  const faults = new Map();          // what -> [{spec, times}]
  const watchers = new Set();
  const messages = new Map();        // msg id -> {chat, at, seqs: Set}
  const sockets = new Set();
  let events = [];                   // [{s, t, d}] of the current session
  let seq = 0;
  let session = '';
  let live;                          // the socket that identified or resumed
  let nextId = 1;
  let closed = false;
  const api = { replayExtra: 0 };

  const notify = () => { for (const w of [...watchers]) w(); };
  const takeFault = (what) => {
    const list = faults.get(what);
    if (!list?.length) return undefined;
    const f = list[0];
    if (--f.times <= 0) list.shift();
    return f.spec;
  };
  const validToken = (header) => {
    const m = /^QQBot (\S+)$/.exec(header ?? '');
    const until = m && tokens.get(m[1]);
    return Boolean(until && until > Date.now());
  };
  const json = (res, status, body) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  // A fault for one HTTP answer: true when it answered (or destroyed) already.
  const applyFault = async (what, req, res) => {
    const spec = takeFault(what);
    if (!spec) return false;
    if (spec.delayMs) { await new Promise((r) => setTimeout(r, spec.delayMs)); return false; }
    if (spec.drop) { req.socket.destroy(); return true; }
    json(res, spec.status ?? 500, { code: spec.code ?? spec.status ?? 500, message: spec.message ?? 'mock fault' });
    return true;
  };

  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    let body = {};
    try { body = text ? JSON.parse(text) : {}; } catch { return json(res, 400, { code: 400, message: 'body is not JSON' }); }
    const url = new URL(req.url, 'http://x');
    try {
      if (url.pathname.startsWith('/_mock/')) return control(url.pathname, body, res);
      if (req.method === 'POST' && url.pathname === '/app/getAppAccessToken') {
        const ok = body.appId === appId && body.clientSecret === secret;
        record.tokens.push({ appId: body.appId, ok, at: Date.now() });
        notify();
        if (await applyFault('token', req, res)) return;
        if (!ok) return json(res, 401, { code: 100016, message: 'invalid appid or secret' });
        const token = `mocktok-${randomBytes(12).toString('hex')}`;
        tokens.set(token, Date.now() + expiresIn * 1000);
        return json(res, 200, { access_token: token, expires_in: String(expiresIn) });
      }
      const tokenOk = validToken(req.headers.authorization);
      if (req.method === 'GET' && (url.pathname === '/gateway' || url.pathname === '/gateway/bot')) {
        record.gateways.push({ path: url.pathname, token_ok: tokenOk });
        notify();
        if (await applyFault('gateway', req, res)) return;
        if (!tokenOk) return json(res, 401, { code: 11244, message: 'token not exist or expire' });
        const gateway = { url: `ws://${host}:${port}/websocket` };
        // /gateway/bot adds the shard advice (QQ docs: event-emit, "分片连接").
        if (url.pathname === '/gateway/bot') Object.assign(gateway, { shards: 1, session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 } });
        return json(res, 200, gateway);
      }
      const m = /^\/v2\/(users|groups)\/([^/]+)\/messages$/.exec(url.pathname);
      if (req.method === 'POST' && m) {
        const chat = `${m[1] === 'users' ? 'c2c' : 'group'}:${m[2]}`;
        const entry = { body, chat, path: url.pathname, msg_id: body.msg_id, msg_seq: body.msg_seq, msg_type: body.msg_type, content: body.content, token_ok: tokenOk, at: Date.now(), status: 200 };
        record.replies.push(entry);
        const answer = (status, code, message) => { entry.status = status; notify(); json(res, status, { code, message }); };
        if (await applyFault('send', req, res)) { entry.status = 'fault'; notify(); return; }
        if (!tokenOk) return answer(401, 11244, 'token not exist or expire');
        if (body.msg_type !== 0) return answer(400, 40034001, 'msg_type must be 0 for text');
        if (typeof body.content !== 'string' || !body.content.length || [...body.content].length > maxChars) return answer(400, 40034002, `content must be 1-${maxChars} characters`);
        const original = messages.get(body.msg_id);
        if (!original || original.chat !== chat) return answer(400, 40034024, 'msg_id is not a message of this chat (active messages are not allowed)');
        if (Date.now() > original.at + (chat.startsWith('group:') ? groupWindowMs : c2cWindowMs)) return answer(400, 40034025, 'the passive reply window has closed');
        const s = body.msg_seq ?? 1;
        if (original.seqs.has(s)) return answer(400, 40054005, 'duplicate msg_seq for this msg_id');
        if (original.seqs.size >= 5) return answer(400, 22009, 'msg limit exceed: 5 replies per message');
        original.seqs.add(s);
        entry.accepted = true;
        notify();
        return json(res, 200, { id: `reply-${nextId++}`, timestamp: Math.floor(Date.now() / 1000) });
      }
      json(res, 404, { code: 404, message: `no ${req.method} ${url.pathname} here` });
    } catch (error) {
      json(res, 500, { code: 500, message: String(error) });
    }
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 1 << 20 });
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url, 'http://x').pathname !== '/websocket') return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws));
  });

  // An event made by sayRaw carries `raw`: [marker, bytes]; it goes out (and is replayed) with the bytes in the marker's place.
  const send = (ws, payload) => {
    if (ws.readyState !== 1) return;
    const { raw, ...rest } = payload;
    if (!raw) return ws.send(JSON.stringify(rest));
    const text = Buffer.from(JSON.stringify(rest));
    const at = text.indexOf(raw[0]);
    ws.send(Buffer.concat([text.subarray(0, at), raw[1], text.subarray(at + raw[0].length)]), { binary: false });
  };
  const dispatch = (t, d, raw) => {
    const event = { op: 0, s: ++seq, t, d, id: `${t}:${seq}`, ...(raw ? { raw } : {}) };
    events.push(event);
    if (events.length > EVENT_LOG_MAX) events = events.slice(-EVENT_LOG_MAX);
    if (live) send(live, event);
    return event;
  };

  function onSocket(ws) {
    record.connections++;
    notify();
    let authed = false;
    send(ws, { op: 10, d: { heartbeat_interval: heartbeatMs } });
    ws.on('message', (data, binary) => {
      let p;
      try { p = JSON.parse(data.toString('utf8')); } catch { return ws.close(4002, 'invalid payload'); }
      if (binary) return ws.close(4002, 'binary payload');
      record.payloads.push({ op: p.op, at: Date.now() });
      switch (p.op) {
        case 1:
          record.heartbeats.push({ d: p.d });
          send(ws, { op: 11 });
          break;
        case 2: {
          const d = p.d ?? {};
          record.identify.push({ token: d.token, intents: d.intents, shard: d.shard });
          if (!validToken(d.token)) { ws.close(4004, 'invalid token'); break; }
          if (typeof d.intents !== 'number' || !(d.intents & GROUP_AND_C2C_EVENT)) { ws.close(4014, 'intent not allowed'); break; }
          session = randomBytes(8).toString('hex');
          events = [];
          seq = 0;
          authed = true;
          live = ws;
          send(ws, { op: 0, s: ++seq, t: 'READY', d: { version: 1, session_id: session, user: { id: '1000', username: 'xsclaw-mock-bot', bot: true }, shard: [0, 1] } });
          break;
        }
        case 6: {
          const d = p.d ?? {};
          record.resume.push({ session_id: d.session_id, seq: d.seq });
          if (!validToken(d.token)) { ws.close(4004, 'invalid token'); break; }
          if (!session || d.session_id !== session || typeof d.seq !== 'number' || d.seq > seq) { send(ws, { op: 9, d: false }); break; }
          authed = true;
          live = ws;
          const from = Math.max(0, d.seq - api.replayExtra);
          for (const e of events) if (e.s > from) send(ws, e);
          send(ws, { op: 0, s: ++seq, t: 'RESUMED', d: '' });
          break;
        }
        default:
          ws.close(4001, 'invalid opcode');
      }
      notify();
    });
    ws.on('close', () => {
      if (live === ws) live = undefined;
      notify();
    });
    void authed;
  }

  function control(path, body, res) {
    if (path === '/_mock/say') return json(res, 200, { id: say(body) });
    if (path === '/_mock/record') return json(res, 200, record);
    if (path === '/_mock/fault') {
      const actions = { drop, reconnect, invalid_session: invalidSession, expire_tokens: expireTokens, close: () => closeLive(body.code ?? 4009) };
      if (body.action) {
        if (!actions[body.action]) return json(res, 400, { message: `no action ${body.action}` });
        actions[body.action]();
      } else fault(body.what, body.spec ?? {}, body.times ?? 1);
      return json(res, 200, { ok: true });
    }
    json(res, 404, { message: 'no such control' });
  }

  /** A C2C message whose text is these bytes as they are (e.g. invalid UTF-8), in a text frame; replayed the same on Resume. */
  function sayRaw({ user = 'USEROPENID1', bytes }) {
    const marker = `RAWTEXT${nextId}RAWTEXT`;
    return say({ user, text: marker }, [marker, Buffer.from(bytes)]);
  }

  function say({ user = 'USEROPENID1', group, text }, raw) {
    const id = `ROBOT1.0_mock${nextId++}`;
    const chat = group ? `group:${group}` : `c2c:${user}`;
    messages.set(id, { chat, at: Date.now(), seqs: new Set() });
    const timestamp = new Date().toISOString();
    if (group) dispatch('GROUP_AT_MESSAGE_CREATE', { id, author: { id: user, member_openid: user }, content: ` ${text}`, group_openid: group, group_id: group, timestamp });
    else dispatch('C2C_MESSAGE_CREATE', { id, author: { id: user, user_openid: user }, content: text, timestamp }, raw);
    return id;
  }
  function fault(what, spec, times = 1) {
    if (!faults.has(what)) faults.set(what, []);
    faults.get(what).push({ spec, times });
  }
  function drop() { live?.terminate(); live = undefined; }
  function reconnect() { if (live) send(live, { op: 7 }); }
  function invalidSession() { session = ''; if (live) send(live, { op: 9, d: false }); live = undefined; }
  function closeLive(code) { live?.close(code, 'mock close'); live = undefined; }
  function expireTokens() { for (const t of tokens.keys()) tokens.set(t, 0); }

  await new Promise((resolve) => server.listen(0, host, resolve));
  const port = server.address().port;
  const base = `http://${host}:${port}`;

  Object.defineProperties(api, {
    live: { get: () => Boolean(live) },
    sessionId: { get: () => session },
    seq: { get: () => seq },
  });
  return Object.assign(api, {
    port, url: base, tokenUrl: `${base}/app/getAppAccessToken`, appId, secret, record,
    say, sayRaw, fault, drop, reconnect, invalidSession, expireTokens,
    close: closeLive,
    raw(t, d) { return dispatch(t, d).s; },
    clearFaults() { faults.clear(); },
    replies(chat) { return record.replies.filter((r) => r.chat === chat && r.accepted); },
    waitFor(predicate, ms = 20_000, what = 'a condition') {
      return waitFor(watchers, predicate, ms, () => `mock-qq: no ${what} within ${ms} ms; replies: ${JSON.stringify(record.replies.slice(-4))}`);
    },
    async stop() {
      if (closed) return;
      closed = true;
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}
