// Anthropic Messages wire format: `message` objects, the named-event SSE stream
// (message_start, content_block_start/delta/stop, ping, message_delta, message_stop) and
// `{type: 'error', error: {type, message}}` bodies.
// Replies come pre-split into pieces (see index.mjs) so that each piece is one delta.
import { createHash } from 'node:crypto';

export const name = 'anthropic';

export const matches = (path) => path.endsWith('/messages');

// The API takes the key as x-api-key, and (since version 2026-10-21) as a bearer token.
export const authorized = (headers, key) => headers['x-api-key'] === key || headers.authorization === `Bearer ${key}`;

export const requestIdHeader = (seq) => ({ 'request-id': `req_mock${seq}` });

/** The real API's 400 for the mistakes a client is likely to make, or null. */
export function validate(json) {
  if (typeof json.model !== 'string' || !json.model) return 'model: Field required';
  if (!Number.isInteger(json.max_tokens)) return 'max_tokens: Field required';
  if (!Array.isArray(json.messages)) return 'messages: Input should be a valid list';
  // The classic conversion bugs: a `system` or `tool` role left inside messages.
  const bad = json.messages.findIndex((m) => m?.role !== 'user' && m?.role !== 'assistant');
  return bad < 0 ? null : `messages.${bad}.role: Input should be 'user' or 'assistant'`;
}

const ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export function errorBody(status, message, seq) {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message }, request_id: `req_mock${seq}` };
}

const toolId = (call, ctx, i) => call.id ?? `toolu_mock${ctx.seq}_${i}`;
const stopReason = (r) => (r.calls.length ? 'tool_use' : 'end_turn');
// Real signatures are opaque; a digest keeps them stable for a given thinking text.
const signature = (r) => r.signature ?? createHash('sha256').update(r.thinking.join('')).digest('base64');

function shell(r, ctx, content, stop_reason, output_tokens) {
  return {
    id: `msg_mock${ctx.seq}`,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason,
    stop_sequence: null,
    usage: {
      input_tokens: r.usage.input_tokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens,
      service_tier: 'standard',
    },
  };
}

export function message(r, ctx) {
  const content = [];
  if (r.thinking) content.push({ type: 'thinking', thinking: r.thinking.join(''), signature: signature(r) });
  if (r.text) content.push({ type: 'text', text: r.text.join('') });
  r.calls.forEach((c, i) => {
    content.push({ type: 'tool_use', id: toolId(c, ctx, i), name: c.name, input: JSON.parse(c.args.join('')) });
  });
  return shell(r, ctx, content, stopReason(r), r.usage.output_tokens);
}

const sse = (obj) => `event: ${obj.type}\ndata: ${JSON.stringify(obj)}\n\n`;

export function events(r, ctx) {
  const out = [sse({ type: 'message_start', message: shell(r, ctx, [], null, 1) })];
  let index = 0;
  const block = (content_block, deltas) => {
    out.push(sse({ type: 'content_block_start', index, content_block }));
    if (index === 0) out.push(sse({ type: 'ping' })); // the real API pings here too
    for (const delta of deltas) out.push(sse({ type: 'content_block_delta', index, delta }));
    out.push(sse({ type: 'content_block_stop', index }));
    index++;
  };
  if (r.thinking) {
    block({ type: 'thinking', thinking: '' }, [
      ...r.thinking.map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature: signature(r) },
    ]);
  }
  if (r.text) block({ type: 'text', text: '' }, r.text.map((text) => ({ type: 'text_delta', text })));
  r.calls.forEach((c, i) => {
    block({ type: 'tool_use', id: toolId(c, ctx, i), name: c.name, input: {} }, [
      { type: 'input_json_delta', partial_json: '' },
      ...c.args.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    ]);
  });
  out.push(sse({
    type: 'message_delta',
    delta: { stop_reason: stopReason(r), stop_sequence: null },
    usage: { output_tokens: r.usage.output_tokens },
  }));
  out.push(sse({ type: 'message_stop' }));
  return out;
}
