// OpenAI Chat Completions wire format: chat.completion objects, chat.completion.chunk SSE
// frames ending with `data: [DONE]`, and `{error: {message, type, param, code}}` bodies.
// Replies come pre-split into pieces (see index.mjs) so that each piece is one delta.

export const name = 'openai';

export const matches = (path) => path.endsWith('/chat/completions');

export const authorized = (headers, key) => headers.authorization === `Bearer ${key}`;

export const requestIdHeader = (seq) => ({ 'x-request-id': `req_mock${seq}` });

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** The real API's 400 for the mistakes a client is likely to make, or null. */
export function validate(json) {
  if (typeof json.model !== 'string' || !json.model) return 'you must provide a model parameter';
  if (!Array.isArray(json.messages) || !json.messages.length) return "Missing required parameter: 'messages'.";
  const bad = json.messages.findIndex((m) => !ROLES.has(m?.role));
  return bad < 0 ? null : `Invalid value for 'messages[${bad}].role'.`;
}

export function errorBody(status, message) {
  const [type, code] =
    status === 401 ? ['invalid_request_error', 'invalid_api_key']
    : status === 429 ? ['requests', 'rate_limit_exceeded']
    : status >= 500 ? ['server_error', null]
    : ['invalid_request_error', null];
  return { error: { message, type, param: null, code } };
}

const FINGERPRINT = 'fp_mock';

function usage(u) {
  return {
    prompt_tokens: u.input_tokens,
    completion_tokens: u.output_tokens,
    total_tokens: u.input_tokens + u.output_tokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

const callId = (call, ctx, i) => call.id ?? `call_mock${ctx.seq}_${i}`;
const finishReason = (r) => (r.calls.length ? 'tool_calls' : 'stop');

export function message(r, ctx) {
  const msg = { role: 'assistant', content: r.text ? r.text.join('') : null };
  if (r.thinking) msg.reasoning_content = r.thinking.join('');
  if (r.calls.length) {
    msg.tool_calls = r.calls.map((c, i) => ({
      id: callId(c, ctx, i),
      type: 'function',
      function: { name: c.name, arguments: c.args.join('') },
    }));
  }
  msg.refusal = null;
  msg.annotations = [];
  return {
    id: `chatcmpl-mock${ctx.seq}`,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message: msg, logprobs: null, finish_reason: finishReason(r) }],
    usage: usage(r.usage),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

const sse = (obj) => `data: ${JSON.stringify(obj)}\n\n`;

/** SSE frames; usage comes only with `stream_options.include_usage`, as on the real API. */
export function events(r, ctx) {
  const head = {
    id: `chatcmpl-mock${ctx.seq}`,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
  const tail = ctx.includeUsage ? { usage: null } : {};
  const frame = (delta, finish_reason = null) =>
    sse({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...tail });

  const out = [frame({ role: 'assistant', content: r.text || r.thinking ? '' : null, refusal: null })];
  for (const piece of r.thinking ?? []) out.push(frame({ reasoning_content: piece }));
  for (const piece of r.text ?? []) out.push(frame({ content: piece }));
  r.calls.forEach((c, index) => {
    out.push(frame({ tool_calls: [{ index, id: callId(c, ctx, index), type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const piece of c.args) out.push(frame({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  out.push(frame({}, finishReason(r)));
  if (ctx.includeUsage) out.push(sse({ ...head, choices: [], usage: usage(r.usage) }));
  out.push('data: [DONE]\n\n');
  return out;
}
