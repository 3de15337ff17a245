// Mock Telegram Bot API server for the firmware's end-to-end tests (loopback only).
// It speaks the methods the firmware uses (getMe, getUpdates with long polling and
// offset confirmation, sendMessage, editMessageText, sendChatAction,
// setMyCommands), with scripted users, faults, and a record of every call.
// Checked against grammY, an independent Bot API client (test/e2e/mock-telegram.test.mjs).
//
//   const tg = await startMockTelegram({ token });
//   tg.url                          base URL for telegram.base_url
//   tg.say({ chat, text, from?, type?, entities?, replyTo? })  a user sends a message; resolves its update_id
//   tg.sayRaw({ chat, bytes, ... })  as say, but the text is sent as these bytes, valid UTF-8 or not
//   tg.raw(update)                  queue an arbitrary (even malformed) update object; update_id added when absent
//   tg.clearFaults()                forget the faults not yet used
//   tg.polling                      true while a long poll waits
//   tg.fault(method, spec, times=1) the next `times` calls of method fail: spec is
//                                   {status: 429, retryAfter} | {status: 5xx} | {drop: true} (socket destroyed)
//                                   | {malformed: true} (a truncated JSON body) | {status: 409} | {status: 401}
//                                   | {delayMs} (answered normally, that much later)
//                                   | {hold: promise} (answered normally once the promise resolves)
//   tg.calls                        [{method, params, token_ok, at}] in order
//   tg.chat(id)                     [{message_id, text, parse_mode, edits: [..texts], sent_at}] the bot's messages in a chat
//   tg.waitFor(predicate, ms)       resolves when predicate(tg) is truthy (checked on every call)
//   tg.close()
//
// Telegram's rules it enforces (so a firmware bug shows): a wrong token gets 401;
// text must be 1-4096 characters after entity parsing; parse_mode HTML must use
// Telegram's tags, balanced, with only &lt; &gt; &amp; &quot; and numeric entities
// (else 400 "can't parse entities"); editing to the same text and markup is 400
// "message is not modified"; getUpdates confirms every update below `offset`.
import http from 'node:http';
import { waitFor } from '../waiters.mjs';

const HTML_TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'code', 'pre', 'blockquote', 'tg-emoji']);
const MAX_TEXT = 4096;

/** Telegram's HTML parse: the visible text, or throws with Telegram's description. */
export function parseHtml(html) {
  const stack = [];
  let text = '';
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) throw new Error(`Bad Request: can't parse entities: Unclosed start tag at byte offset ${i}`);
      const inner = html.slice(i + 1, end);
      const closing = inner.startsWith('/');
      const name = (closing ? inner.slice(1) : inner).trim().split(/\s+/)[0].toLowerCase();
      if (!HTML_TAGS.has(name)) throw new Error(`Bad Request: can't parse entities: Unsupported start tag "${name}" at byte offset ${i}`);
      if (closing) {
        if (stack.pop() !== name) throw new Error(`Bad Request: can't parse entities: Unmatched end tag at byte offset ${i}, expected "</${stack.at(-1) ?? ''}>", found "</${name}>"`);
      } else {
        if (name === 'a' && !/\bhref\s*=\s*"[^"]*"/.test(inner)) throw new Error(`Bad Request: can't parse entities: a tag without href at byte offset ${i}`);
        stack.push(name);
      }
      i = end + 1;
    } else if (c === '&') {
      const m = /^&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/.exec(html.slice(i, i + 12));
      if (!m) throw new Error(`Bad Request: can't parse entities: Character entity expected at byte offset ${i}`);
      const e = m[1];
      text += e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'amp' ? '&' : e === 'quot' ? '"' : String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      i += m[0].length;
    } else if (c === '>') {
      throw new Error(`Bad Request: can't parse entities: Unexpected end tag at byte offset ${i}`);
    } else {
      text += c;
      i++;
    }
  }
  if (stack.length) throw new Error(`Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"`);
  return text;
}

export async function startMockTelegram({ token, username = 'xsclaw_test_bot', botId = 7000001, host = '127.0.0.1' } = {}) {
  if (!token) throw new TypeError('mock-telegram: a token is required');
  const updates = [];   // queued, unconfirmed
  let nextUpdateId = 100;
  let nextMessageId = 1;
  const calls = [];
  const chats = new Map();
  const faults = new Map(); // method -> [{spec, times}]
  const pollers = new Set();
  const watchers = new Set();
  const sockets = new Set();
  const rawTexts = new Map(); // marker -> the bytes sent in its place
  let closed = false;

  const notify = () => { for (const w of [...watchers]) w(); };
  const chatLog = (id) => {
    const key = String(id);
    if (!chats.has(key)) chats.set(key, []);
    return chats.get(key);
  };

  function reply(res, status, body, retryAfter) {
    let text = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    // Raw texts (sayRaw) go out as the bytes given, valid UTF-8 or not.
    for (const [marker, bytes] of rawTexts) {
      for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + bytes.length)) {
        text = Buffer.concat([text.subarray(0, at), bytes, text.subarray(at + marker.length)]);
      }
    }
    const headers = { 'content-type': 'application/json', 'content-length': text.length };
    if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    res.writeHead(status, headers);
    res.end(text);
  }
  const ok = (res, result) => reply(res, 200, { ok: true, result });
  const fail = (res, code, description, parameters) => reply(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) }, parameters?.retry_after);

  function takeFault(method) {
    const list = faults.get(method);
    if (!list?.length) return undefined;
    const f = list[0];
    if (--f.times <= 0) list.shift();
    return f.spec;
  }

  function textOf(params, res) {
    const raw = params.text;
    if (typeof raw !== 'string' || !raw.length) { fail(res, 400, 'Bad Request: message text is empty'); return undefined; }
    let visible = raw;
    if (params.parse_mode !== undefined) {
      if (params.parse_mode !== 'HTML') { fail(res, 400, `Bad Request: unsupported parse_mode ${params.parse_mode} in this mock`); return undefined; }
      try {
        visible = parseHtml(raw);
      } catch (error) {
        fail(res, 400, error.message);
        return undefined;
      }
    }
    if (!visible.trim().length) { fail(res, 400, 'Bad Request: message text is empty'); return undefined; }
    if (visible.length > MAX_TEXT) { fail(res, 400, 'Bad Request: message is too long'); return undefined; }
    return visible;
  }

  function getUpdates(params, res) {
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    const timeout = Math.max(0, Number(params.timeout ?? 0));
    // Confirm everything below offset (Telegram forgets confirmed updates).
    if (offset > 0) while (updates.length && updates[0].update_id < offset) updates.shift();
    const answer = () => ok(res, updates.slice(0, limit));
    if (updates.length || timeout === 0) return answer();
    const poller = () => {
      if (!updates.length) return;
      done();
      answer();
    };
    const timer = setTimeout(() => { done(); answer(); }, timeout * 1000);
    const done = () => { clearTimeout(timer); pollers.delete(poller); };
    res.on('close', done);
    pollers.add(poller);
  }

  function handle(method, params, res, tokenOk) {
    const record = { method, params, token_ok: tokenOk, at: Date.now() };
    calls.push(record);
    notify();
    if (!tokenOk) return fail(res, 401, 'Unauthorized');
    const f = takeFault(method);
    if (f?.delayMs !== undefined) {
      record.fault = f;
      const timer = setTimeout(() => answer(method, params, res), f.delayMs);
      res.on('close', () => clearTimeout(timer));
      return;
    }
    if (f?.hold) {
      record.fault = f;
      let closed = false;
      res.on('close', () => { closed = true; });
      f.hold.then(() => { if (!closed) answer(method, params, res); });
      return;
    }
    if (f) {
      record.fault = f;
      if (f.drop) return res.socket.destroy();
      if (f.malformed) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"ok":true,"result":[{"update_id":');
      }
      const status = Number(f.status);
      if (status === 429) return fail(res, 429, `Too Many Requests: retry after ${f.retryAfter ?? 1}`, { retry_after: f.retryAfter ?? 1 });
      if (status === 409) return fail(res, 409, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running');
      if (status === 401) return fail(res, 401, 'Unauthorized');
      return fail(res, status, 'Internal Server Error');
    }
    answer(method, params, res);
  }

  function answer(method, params, res) {
    switch (method) {
      case 'getMe':
        return ok(res, { id: botId, is_bot: true, first_name: 'xsclaw test', username, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
      case 'getUpdates':
        return getUpdates(params, res);
      case 'setMyCommands':
        if (!Array.isArray(params.commands) || params.commands.some((c) => !/^[a-z0-9_]{1,32}$/.test(c?.command ?? '') || typeof c.description !== 'string' || !c.description.length || c.description.length > 256)) {
          return fail(res, 400, 'Bad Request: BOT_COMMAND_INVALID');
        }
        return ok(res, true);
      case 'deleteWebhook':
        return ok(res, true);
      case 'sendChatAction':
        if (params.chat_id === undefined || typeof params.action !== 'string') return fail(res, 400, 'Bad Request: chat_id and action are required');
        return ok(res, true);
      case 'sendMessage': {
        if (params.chat_id === undefined) return fail(res, 400, 'Bad Request: chat not found');
        const visible = textOf(params, res);
        if (visible === undefined) return;
        const message = { message_id: nextMessageId++, text: visible, raw: params.text, parse_mode: params.parse_mode, edits: [], sent_at: Date.now() };
        chatLog(params.chat_id).push(message);
        notify();
        return ok(res, { message_id: message.message_id, date: Math.floor(Date.now() / 1000), chat: { id: Number(params.chat_id), type: 'private' }, text: visible });
      }
      case 'editMessageText': {
        const message = chatLog(params.chat_id).find((m) => m.message_id === Number(params.message_id));
        if (!message) return fail(res, 400, 'Bad Request: message to edit not found');
        const visible = textOf(params, res);
        if (visible === undefined) return;
        if (visible === message.text && params.parse_mode === message.parse_mode && params.text === message.raw) return fail(res, 400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
        message.edits.push(message.text);
        message.text = visible;
        message.raw = params.text;
        message.parse_mode = params.parse_mode;
        notify();
        return ok(res, { message_id: message.message_id, date: Math.floor(Date.now() / 1000), chat: { id: Number(params.chat_id), type: 'private' }, text: visible });
      }
      default:
        return fail(res, 404, 'Not Found: method not found');
    }
  }

  const server = http.createServer(async (req, res) => {
    const chunks = [];
    try {
      for await (const c of req) chunks.push(c);
    } catch {
      return;
    }
    const url = new URL(req.url, 'http://mock');
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!m) return fail(res, 404, 'Not Found');
    let params = Object.fromEntries(url.searchParams);
    const body = Buffer.concat(chunks).toString('utf8');
    const type = req.headers['content-type'] ?? '';
    try {
      if (body && type.includes('application/json')) params = { ...params, ...JSON.parse(body) };
      else if (body && type.includes('application/x-www-form-urlencoded')) params = { ...params, ...Object.fromEntries(new URLSearchParams(body)) };
    } catch {
      return fail(res, 400, 'Bad Request: the request body is not JSON');
    }
    // Form and query values arrive as strings: JSON ones are decoded as Telegram does.
    for (const [k, v] of Object.entries(params)) {
      if (typeof v === 'string' && /^[[{]/.test(v)) {
        try { params[k] = JSON.parse(v); } catch { /* left a string */ }
      }
    }
    handle(m[2], params, res, decodeURIComponent(m[1]) === token);
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, host, resolve));
  const port = server.address().port;

  const push = (update) => {
    updates.push(update);
    for (const p of [...pollers]) p();
    notify();
    return update.update_id;
  };

  return {
    port,
    url: `http://${host}:${port}`,
    username,
    botId,
    calls,
    get pending() { return updates.length; },
    say({ chat, text, from, type = 'private', entities, replyTo }) {
      const sender = from ?? { id: Number(chat), is_bot: false, first_name: `user${chat}`, username: `user${chat}` };
      const message = { message_id: nextMessageId++, from: sender, chat: { id: Number(chat), type, ...(type === 'private' ? { first_name: sender.first_name } : { title: `group ${chat}` }) }, date: Math.floor(Date.now() / 1000), text };
      if (entities) message.entities = entities;
      else if (text.startsWith('/')) message.entities = [{ type: 'bot_command', offset: 0, length: text.split(/\s/)[0].length }];
      if (replyTo) message.reply_to_message = replyTo;
      return push({ update_id: nextUpdateId++, message });
    },
    /** A user sends a message whose text is these bytes as they are (e.g. invalid UTF-8); resolves its update_id. */
    sayRaw({ chat, bytes, ...rest }) {
      const marker = `RAWTEXT${rawTexts.size}RAWTEXT`;
      rawTexts.set(marker, Buffer.from(bytes));
      return this.say({ chat, text: marker, ...rest });
    },
    raw(update) {
      const u = typeof update === 'object' && update !== null && !Array.isArray(update) && update.update_id === undefined ? { update_id: nextUpdateId++, ...update } : update;
      if (typeof u?.update_id === 'number') nextUpdateId = Math.max(nextUpdateId, u.update_id + 1);
      return push(u);
    },
    fault(method, spec, times = 1) {
      if (!faults.has(method)) faults.set(method, []);
      faults.get(method).push({ spec, times });
    },
    clearFaults() { faults.clear(); },
    /** True while a getUpdates long poll waits for an update. */
    get polling() { return pollers.size > 0; },
    chat(id) { return chatLog(id); },
    waitFor(predicate, ms = 20_000, what = 'a condition') {
      return waitFor(watchers, predicate, ms, () => `mock-telegram: no ${what} within ${ms} ms; calls: ${calls.slice(-12).map((c) => c.method).join(', ')}`);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const p of [...pollers]) pollers.delete(p);
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
