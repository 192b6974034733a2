// SPDX-License-Identifier: MIT
// API tests with the official openai SDK against a running server
// (RK1828_SERVER_URL, RK1828_API_KEY): models, chat/completions/responses
// (stream and not), usage, the prefix cache, every error rule through the
// SDK's error classes, abort mid-stream with every slot busy, queue full,
// /metrics against the answers. With RK1828_ENGINE=scripted (the scripted
// engine of the host tests) the names claim only what the HTTP layer
// shows. Prints TAP.
import { KEY, REAL, ok, eq, check, done, client, raw, require, metrics, waitMetrics, waitIdle,
  finished, claim } from './lib.mjs';

const OpenAI = require('openai');
const c = client();
const greedy = { temperature: 0, max_tokens: 24 };
const msgs = [{ role: 'user', content: 'Once upon a time' }];
let model;

async function expectErr(name, cls, status, fn, test) {
  try {
    await fn();
    ok(false, name, 'no error');
  } catch (e) {
    ok(e instanceof cls && e.status === status && (!test || test(e)), name,
       `${e.constructor.name} status ${e.status}: ${e.message}`);
  }
}

await check('models.list', async () => {
  const page = await c.models.list();
  model = page.data[0];
  ok(page.data.length === 1 && typeof model.id === 'string' && model.owned_by === 'rk1828' &&
     Array.isArray(model.cards) && model.cards.length >= 1 && /card\d/.test(model.plan) && model.ctx > 0,
     'models.list: one model with owned_by, cards, plan, ctx', model);
  if (process.env.RK1828_MODEL_ID) eq(model.id, process.env.RK1828_MODEL_ID, 'models.list: id is the alias');
});
await check('models.retrieve', async () => {
  const m = await c.models.retrieve(model.id);
  ok(m.id === model.id && m.owned_by === 'rk1828', 'models.retrieve(id) is the loaded model', m);
});
await expectErr('404 models.retrieve of another id (NotFoundError)', OpenAI.NotFoundError, 404,
  () => c.models.retrieve('no-such-model'), (e) => e.code === 'model_not_found');

let whole;
await check('chat non-stream', async () => {
  whole = await c.chat.completions.create({ model: 'any-name', messages: msgs, ...greedy });
  const ch = whole.choices[0], u = whole.usage;
  ok(whole.object === 'chat.completion' && ch.message.role === 'assistant' &&
     typeof ch.message.content === 'string' && ch.message.content.length > 0 &&
     ['stop', 'length'].includes(ch.finish_reason), 'chat.completions.create: an assistant message and a finish_reason', whole);
  ok(u.prompt_tokens > 0 && u.completion_tokens > 0 && u.completion_tokens <= 24 &&
     u.total_tokens === u.prompt_tokens + u.completion_tokens &&
     typeof u.prompt_tokens_details.cached_tokens === 'number', 'chat usage: prompt, completion, total, cached_tokens', u);
  ok(whole.model === model.id, 'a request naming another model is served by the loaded one', whole.model);
});

await check('chat stream', async () => {
  const s = await c.chat.completions.create({ messages: msgs, ...greedy, stream: true, stream_options: { include_usage: true } });
  let text = '', finish = null, usage = null, n = 0, roleFirst = false, afterUsage = 0;
  for await (const ch of s) {
    if (usage) afterUsage++;
    if (ch.usage) { usage = ch.usage; ok(ch.choices.length === 0, 'stream: the usage chunk has choices []'); continue; }
    if (n++ === 0) roleFirst = ch.choices[0].delta.role === 'assistant';
    text += ch.choices[0].delta.content || '';
    if (ch.choices[0].finish_reason) finish = ch.choices[0].finish_reason;
  }
  ok(roleFirst && n >= 2, 'stream: the first chunk carries the role, content follows');
  eq(text, whole.choices[0].message.content, 'stream: concatenated deltas equal the non-stream content (greedy)');
  eq(finish, whole.choices[0].finish_reason, 'stream: same finish_reason');
  ok(usage && usage.completion_tokens === whole.usage.completion_tokens && usage.prompt_tokens === whole.usage.prompt_tokens && afterUsage === 0,
     'stream include_usage: the last chunk has the same usage', usage);
});

await check('chat text parts and prefill', async () => {
  const a = await c.chat.completions.create({ messages: [{ role: 'user', content: [{ type: 'text', text: 'Once upon ' }, { type: 'text', text: 'a time' }] }], ...greedy });
  eq(a.usage.prompt_tokens, whole.usage.prompt_tokens, 'content parts are joined (BR-23): the same prompt tokens as the string');
  if (REAL) eq(a.choices[0].message.content, whole.choices[0].message.content, 'content parts are joined (BR-23): the same greedy text');
  const b = await c.chat.completions.create({ messages: [...msgs, { role: 'assistant', content: 'there' }], ...greedy, max_tokens: 4 });
  ok(b.usage.prompt_tokens > whole.usage.prompt_tokens, 'a trailing assistant message is a prefill (longer prompt)', b.usage);
});

await check('completions', async () => {
  const a = await c.completions.create({ model: 'x', prompt: 'Once upon a time', ...greedy });
  ok(a.object === 'text_completion' && a.choices[0].text.length > 0 && a.usage.total_tokens === a.usage.prompt_tokens + a.usage.completion_tokens,
     'completions.create: text and usage', a);
  const s = await c.completions.create({ prompt: ['Once upon a time'], ...greedy, stream: true, stream_options: { include_usage: true } });
  let t = '', u = null;
  for await (const ch of s) { if (ch.usage) u = ch.usage; else t += ch.choices[0].text; }
  eq(t, a.choices[0].text, 'completions stream equals non-stream (prompt as an array of one string)');
  ok(u && u.completion_tokens === a.usage.completion_tokens, 'completions stream usage', u);
});

await check('responses', async () => {
  const r = await c.responses.create({ input: 'Once upon a time', instructions: '', temperature: 0, max_output_tokens: 24 });
  ok(r.object === 'response' && ['completed', 'incomplete'].includes(r.status) && r.output_text.length > 0 &&
     r.usage.input_tokens > 0 && r.usage.output_tokens > 0, 'responses.create: output_text and usage', r);
  const s = await c.responses.create({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'Once upon a time' }] }], instructions: '', temperature: 0, max_output_tokens: 24, stream: true });
  const types = new Set(); let t = '';
  for await (const ev of s) { types.add(ev.type); if (ev.type === 'response.output_text.delta') t += ev.delta; }
  ok(types.has('response.created') && types.has('response.output_text.delta') && (types.has('response.completed') || types.has('response.incomplete')),
     'responses stream: created, output_text.delta, completed events', [...types]);
  eq(t, r.output_text, 'responses stream deltas equal output_text');
  await expectErr('previous_response_id is refused with a 400', OpenAI.BadRequestError, 400,
    () => c.responses.create({ input: 'x', previous_response_id: 'resp_1' }), (e) => e.param === 'previous_response_id');
});

await check('max_tokens 0', async () => {
  const z = await c.chat.completions.create({ messages: msgs, max_tokens: 0 });
  ok(z.choices[0].message.content === '' && z.usage.completion_tokens === 0 && z.choices[0].finish_reason === 'length',
     'max_tokens 0: no tokens, finish_reason length', z);
});

await check('stop strings', async () => {
  const full = whole.choices[0].message.content;
  const words = full.split(' ').filter((w) => w.length > 2);
  const stop = words[Math.min(2, words.length - 1)];
  const a = await c.chat.completions.create({ messages: msgs, ...greedy, stop: [stop] });
  const s = await c.chat.completions.create({ messages: msgs, ...greedy, stop, stream: true });
  let t = '';
  for await (const ch of s) t += ch.choices[0]?.delta?.content || '';
  ok(a.choices[0].finish_reason === 'stop' && full.startsWith(a.choices[0].message.content) && !a.choices[0].message.content.includes(stop),
     `stop "${stop}": text ends before it, finish_reason stop`, a.choices[0]);
  eq(t, a.choices[0].message.content, 'stop: streamed text equals the non-stream text (BR-22)');
});

// The reply's trailing whitespace is kept on every endpoint, as
// completions keep it (the recorded reply of TRAILING-WS is "The end. \n\n").
if (!REAL) await check('trailing whitespace', async () => {
  const want = 'The end. \n\n', m = [{ role: 'user', content: 'TRAILING-WS' }];
  const a = await c.chat.completions.create({ messages: m, max_tokens: 16 });
  eq(a.choices[0].message.content, want, 'chat: the reply\'s trailing whitespace is kept');
  const s = await c.chat.completions.create({ messages: m, max_tokens: 16, stream: true });
  let t = '';
  for await (const ch of s) t += ch.choices[0]?.delta?.content || '';
  eq(t, want, 'chat stream: the deltas end with the reply\'s trailing whitespace');
  const r = await c.responses.create({ input: 'TRAILING-WS', max_output_tokens: 16 });
  eq(r.output_text, want, 'responses: output_text keeps the trailing whitespace');
  const rs = await c.responses.create({ input: 'TRAILING-WS', max_output_tokens: 16, stream: true });
  let rt = '', done = null;
  for await (const ev of rs) {
    if (ev.type === 'response.output_text.delta') rt += ev.delta;
    if (ev.type === 'response.output_text.done') done = ev.text;
  }
  ok(rt === want && done === want, 'responses stream: the deltas and output_text.done keep it', { rt, done });
  const p = await c.completions.create({ prompt: 'TRAILING-WS', max_tokens: 16 });
  eq(p.choices[0].text, want, 'completions: the same text');
});

await check('prefix cache', async () => {
  const long = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the sun. One day, she saw a big red ball in the park. '.repeat(2);
  const a = await c.completions.create({ prompt: long, temperature: 0, max_tokens: 16 });
  const b = await c.completions.create({ prompt: long, temperature: 0, max_tokens: 16 });
  ok(b.usage.prompt_tokens_details.cached_tokens > 0 && b.usage.prompt_tokens_details.cached_tokens < b.usage.prompt_tokens,
     claim('prefix cache: the same long prompt again reports 0 < cached_tokens < prompt_tokens',
           'prefix cache: the engine\'s cached tokens reach usage.prompt_tokens_details.cached_tokens'), b.usage);
  if (REAL) eq(b.choices[0].text, a.choices[0].text, 'prefix cache: identical text with and without the hit (BR-29)');
});

// ---- errors --------------------------------------------------------------
const B = OpenAI.BadRequestError;
const bad = [
  ['"stream":"false"', { messages: msgs, stream: 'false' }, 'stream'],
  ['"temperature":"hot"', { messages: msgs, temperature: 'hot' }, 'temperature'],
  ['max_tokens < 0', { messages: msgs, max_tokens: -1 }, 'max_tokens'],
  ['max_tokens "x" next to max_completion_tokens', { messages: msgs, max_completion_tokens: 4, max_tokens: 'x' }, 'max_tokens'],
  ['temperature < 0', { messages: msgs, temperature: -0.5 }, 'temperature'],
  ['temperature > 2', { messages: msgs, temperature: 2.5 }, 'temperature'],
  ['top_p 0', { messages: msgs, top_p: 0 }, 'top_p'],
  ['top_p > 1', { messages: msgs, top_p: 1.5 }, 'top_p'],
  ['missing messages', { max_tokens: 3 }, 'messages'],
  ['n 2', { messages: msgs, n: 2 }, 'n'],
  ['5 stop strings', { messages: msgs, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
  ['a stop string of 257 bytes (the engine takes 256)', { messages: msgs, stop: ['x', 'y'.repeat(257)] }, 'stop'],
  ['"stop": a string of 257 bytes', { messages: msgs, stop: 'y'.repeat(257) }, 'stop'],
  ['image part', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages'],
  ['unknown role', { messages: [{ role: 'wizard', content: 'x' }] }, 'messages'],
  ['response_format type sound', { messages: msgs, response_format: { type: 'sound' } }, 'response_format.type'],
  ['response_format json_schema without a schema', { messages: msgs, response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
    'response_format.json_schema.schema'],
  ['response_format json_object schema 123', { messages: msgs, response_format: { type: 'json_object', schema: 123 } }, 'response_format.schema'],
  ['schema "type": 123', { messages: msgs, response_format: { type: 'json_object', schema: { type: 123 } } }, 'response_format.schema'],
  ['schema "type": "hiccup"', { messages: msgs, response_format: { type: 'json_object', schema: { type: 'hiccup' } } }, 'response_format.schema'],
  ['json_schema with a back-reference in "pattern"', { messages: msgs, json_schema: { type: 'string', pattern: '^(a)\\1$' } }, 'json_schema'],
  ['top_logprobs without logprobs', { messages: msgs, top_logprobs: 3 }, 'top_logprobs'],
  ['a GBNF grammar', { messages: msgs, grammar: 'root ::= "a"' }, 'grammar'],
  ['a schema that accepts no document ({$ref: "#"})',
   { messages: msgs, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { $ref: '#' } } } },
   'response_format.json_schema.schema'],
  ['presence_penalty > 2', { messages: msgs, presence_penalty: 2.5 }, 'presence_penalty'],
  ['frequency_penalty < -2', { messages: msgs, frequency_penalty: -3 }, 'frequency_penalty'],
  ['repeat_penalty < 0', { messages: msgs, repeat_penalty: -1 }, 'repeat_penalty'],
  ['repeat_last_n -2', { messages: msgs, repeat_last_n: -2 }, 'repeat_last_n'],
  ['min_p > 1', { messages: msgs, min_p: 1.5 }, 'min_p'],
  ['logit_bias key "abc"', { messages: msgs, logit_bias: { abc: 1 } }, 'logit_bias'],
  ['logit_bias id outside the vocabulary', { messages: msgs, logit_bias: { 99999999: 1 } }, 'logit_bias'],
  ['logit_bias 101', { messages: msgs, logit_bias: { 5: 101 } }, 'logit_bias'],
  ['logit_bias [[5]]', { messages: msgs, logit_bias: [[5]] }, 'logit_bias'],
];
for (const [name, body, param] of bad)
  await expectErr(`400 ${name} (BadRequestError, param ${param})`, B, 400,
    () => c.chat.completions.create(body), (e) => e.param?.startsWith(param) && e.error?.type === 'invalid_request_error');
await check('sampling fields in range are taken', async () => {
  const r = await c.chat.completions.create({ messages: msgs, ...greedy, max_tokens: 4, presence_penalty: -2, frequency_penalty: 2,
    repeat_penalty: 1.1, repeat_last_n: -1, min_p: 0.05, logit_bias: { 5: -100, 6: 100 } });
  ok(r.choices[0].message.role === 'assistant' && r.usage.completion_tokens > 0,
     'presence/frequency -2/2, repeat_penalty 1.1, repeat_last_n -1, min_p 0.05, logit_bias: 200 with a reply', r.usage);
  const a = await raw('POST', '/v1/completions', JSON.stringify({ prompt: 'x', max_tokens: 2, logit_bias: [[5, false], [6, 1.5], ['Once', -1]] }),
    { 'Content-Type': 'application/json' });
  ok(a.status === 200 && a.json?.choices?.length === 1, 'llama-server logit_bias [[5,false],[6,1.5],["Once",-1]]: 200', a.text);
});
await expectErr('400 completions: missing prompt', B, 400, () => c.completions.create({ max_tokens: 3 }), (e) => e.param === 'prompt');
await expectErr('400 completions: echo true', B, 400, () => c.completions.create({ prompt: 'x', echo: true }), (e) => e.param === 'echo');
await expectErr('400 completions: best_of 2 (one sample per request)', B, 400,
  () => c.completions.create({ prompt: 'x', max_tokens: 2, best_of: 2 }), (e) => e.param === 'best_of');
await check('best_of 1 and a stop string of 256 bytes are taken', async () => {
  const r = await c.completions.create({ prompt: 'Once upon a time', max_tokens: 2, best_of: 1, stop: ['z'.repeat(256)] });
  ok(r.choices.length === 1 && r.usage.completion_tokens > 0, 'completions best_of 1, stop of 256 bytes: 200 with a reply', r);
});
// A token limit beyond the room the prompt leaves is an upper bound (as
// llama-server and Ollama take it; OpenCode sends max_tokens 32000): the
// reply ends at the context's end, n_ctx - prompt + 1 tokens (the last
// token needs no KV row), "length" / incomplete. The prompt is sized with
// /tokenize to leave 10-40 tokens; EOS is banned (logit_bias -100) so that
// the real model cannot end first.
await check('max_tokens over the context is an upper bound: the reply ends at the context with length', async () => {
  const ctx = model.ctx, j = { 'Content-Type': 'application/json' };
  const props = (await raw('GET', '/props')).json;
  const tokens = async (content) => (await raw('POST', '/tokenize', JSON.stringify({ content, add_special: true }), j)).json.tokens.length;
  const eosIds = (await raw('POST', '/tokenize', JSON.stringify({ content: props.eos_token, parse_special: true }), j)).json.tokens;
  const unit = 'once upon a time ', per = (await tokens(unit.repeat(20))) / 20;
  let k = Math.floor((ctx - 60) / per);
  while (await tokens(unit.repeat(k)) > ctx - 30) k--;
  while (await tokens(unit.repeat(k + 1)) <= ctx - 30) k++;
  const prompt = unit.repeat(k), bias = eosIds.length === 1 ? { [eosIds[0]]: -100 } : {};
  const a = await c.completions.create({ prompt, max_tokens: 32000, temperature: 0, logit_bias: bias });
  const room = ctx - a.usage.prompt_tokens + 1;
  ok(a.choices[0].finish_reason === 'length' && a.usage.completion_tokens === room && room >= 10 && room <= 40,
     `completions max_tokens 32000 with ${a.usage.prompt_tokens} prompt tokens of ${ctx}: 200, length after ${room} tokens (n_ctx - prompt + 1)`,
     { usage: a.usage, finish: a.choices[0].finish_reason });
  const m = [{ role: 'user', content: prompt }];
  const b = await c.chat.completions.create({ messages: m, max_completion_tokens: 32000, temperature: 0, logit_bias: bias });
  ok(b.choices[0].finish_reason === 'length' && b.usage.completion_tokens === ctx - b.usage.prompt_tokens + 1,
     'chat max_completion_tokens 32000: 200, length at the end of the context', { usage: b.usage, finish: b.choices[0].finish_reason });
  const s = await c.chat.completions.create({ messages: m, max_tokens: 32000, temperature: 0, logit_bias: bias, stream: true,
    stream_options: { include_usage: true } });
  let fin = null, u = null;
  for await (const ch of s) {
    if (ch.choices[0]?.finish_reason) fin = ch.choices[0].finish_reason;
    if (ch.usage) u = ch.usage;
  }
  ok(fin === 'length' && u && u.completion_tokens === ctx - u.prompt_tokens + 1,
     'streamed chat max_tokens 32000: finish_reason length at the end of the context', { fin, u });
  const r = await c.responses.create({ input: prompt, max_output_tokens: 32000, temperature: 0, logit_bias: bias });
  ok(r.status === 'incomplete' && r.incomplete_details?.reason === 'max_output_tokens' &&
     r.usage.output_tokens === ctx - r.usage.input_tokens + 1,
     'responses max_output_tokens 32000: status incomplete, reason max_output_tokens, at the end of the context',
     { status: r.status, details: r.incomplete_details, usage: r.usage });
});
await expectErr('400 context length exceeded by the prompt alone names messages, not max_tokens', B, 400,
  () => c.chat.completions.create({ messages: [{ role: 'user', content: 'once upon a time '.repeat(model.ctx) }], max_tokens: 1 }),
  (e) => e.code === 'context_length_exceeded' && e.param === 'messages' && !e.message.includes('max_tokens') &&
         e.message.includes(`context is ${model.ctx} tokens`));
await expectErr('400 completions: a prompt alone over the context names prompt', B, 400,
  () => c.completions.create({ prompt: 'once upon a time '.repeat(model.ctx), max_tokens: 1 }),
  (e) => e.code === 'context_length_exceeded' && e.param === 'prompt');
await check('invalid JSON', async () => {
  const r = await raw('POST', '/v1/chat/completions', '{"messages": [', { 'Content-Type': 'application/json' });
  ok(r.status === 400 && r.json?.error?.type === 'invalid_request_error' && /invalid JSON/.test(r.json.error.message),
     '400 invalid JSON, OpenAI envelope', r.text);
  const { APIError } = OpenAI;
  const e = APIError.generate(r.status, r.json, r.json.error.message, new Headers());
  ok(e instanceof B, 'invalid JSON maps to the SDK BadRequestError');
});
if (KEY) {
  await expectErr('401 wrong API key (AuthenticationError)', OpenAI.AuthenticationError, 401,
    () => client({ apiKey: 'wrong' }).models.list(), (e) => e.code === 'invalid_api_key');
  await check('401 missing key', async () => {
    const r = await raw('GET', '/v1/models', undefined, { Authorization: '' });
    ok(r.status === 401 && r.json?.error?.code === 'invalid_api_key', '401 missing API key, OpenAI envelope', r.text);
  });
  await check("llama-server's X-Api-Key header", async () => {
    let r = await raw('GET', '/v1/models', undefined, { Authorization: '', 'X-Api-Key': KEY });
    ok(r.status === 200 && r.json?.data?.length === 1, 'X-Api-Key: KEY is accepted instead of Authorization: Bearer', r.text);
    r = await raw('GET', '/v1/models', undefined, { Authorization: '', 'X-Api-Key': KEY + 'x' });
    ok(r.status === 401 && r.json?.error?.code === 'invalid_api_key', 'a wrong X-Api-Key is a 401', r.text);
  });
}
await check('top_k -1 (vLLM clients) is the whole vocabulary, not a 400', async () => {
  const r = await c.chat.completions.create({ messages: msgs, max_tokens: 2, top_k: -1 });
  ok(r.choices[0].message.content.length > 0 && r.usage.completion_tokens === 2, 'top_k -1: 200 with 2 tokens', r);
});
await expectErr('404 unknown path (NotFoundError)', OpenAI.NotFoundError, 404, () => c.get('/nothing-here'),
  (e) => e.error?.type === 'invalid_request_error');
await expectErr('405 wrong method (APIError 405)', OpenAI.APIError, 405, () => c.get('/chat/completions'),
  (e) => e.headers.get('allow')?.includes('POST'));
await expectErr('413 body over 8 MiB (APIError 413)', OpenAI.APIError, 413,
  () => c.chat.completions.create({ messages: [{ role: 'user', content: 'a'.repeat(9 << 20) }] }),
  (e) => e.code === 'request_too_large');

// ---- structured outputs ----------------------------------------------------
const fmt = (schema) => ({ type: 'json_schema', json_schema: { name: 'out', strict: true, schema } });
await expectErr('400 completions: response_format json_schema without a schema', B, 400,
  () => c.completions.create({ prompt: 'x', max_tokens: 3, response_format: { type: 'json_schema', json_schema: {} } }),
  (e) => e.param === 'response_format.json_schema.schema');
await expectErr('400 responses: text.format json_schema without a schema', B, 400,
  () => c.responses.create({ input: 'x', text: { format: { type: 'json_schema', name: 'n' } } }),
  (e) => e.param === 'text.format.schema');
await expectErr('400 schema keyword we cannot follow names it ("uniqueItems" at properties.n)', B, 400,
  () => c.chat.completions.create({ messages: msgs, response_format: fmt({ type: 'object', properties: { n: { type: 'array', uniqueItems: true } } }) }),
  (e) => e.param === 'response_format.json_schema.schema' && /'uniqueItems' is not supported \(at properties\.n\)/.test(e.message));
await check('structured outputs accepted', async () => {
  const a = await c.chat.completions.create({ messages: msgs, temperature: 0, max_tokens: 10, response_format: fmt({ const: 'foooooo' }) });
  ok(typeof a.choices[0].message.content === 'string', 'response_format json_schema is accepted (200)', a.choices[0]);
  const b = await c.chat.completions.create({ messages: msgs, temperature: 0, max_tokens: 24, response_format: { type: 'json_object' } });
  ok(typeof b.choices[0].message.content === 'string', 'response_format json_object is accepted (200)', b.choices[0]);
  if (!REAL) return;
  ok(a.choices[0].message.content === '"foooooo"' && a.choices[0].finish_reason === 'stop',
     'const "foooooo", max_tokens 10: content is "foooooo" (quotes included), finish stop', a.choices[0]);
  ok(b.choices[0].message.content.startsWith('{'), 'json_object: the content starts with {', b.choices[0].message.content);
  const t = await c.completions.create({ prompt: 'Once upon a time', temperature: 0, max_tokens: 6,
    response_format: fmt({ const: '42' }) });
  ok(t.choices[0].text === '"42"' && t.choices[0].finish_reason === 'stop', 'completions, const "42", max_tokens 6: "42"', t.choices[0]);
  const u = await c.chat.completions.create({ messages: msgs, temperature: 0, max_tokens: 40, json_schema: { items: [{ type: 'integer' }] } });
  let arr = null;
  try { arr = JSON.parse(u.choices[0].message.content); } catch { /* checked below */ }
  ok(Array.isArray(arr) && arr.length <= 1 && arr.every(Number.isInteger) && u.choices[0].finish_reason === 'stop',
     'top-level json_schema {items: [integer]}: a JSON array of at most one integer', u.choices[0].message.content);
  let text = '', finish = null;
  for await (const ch of await c.chat.completions.create({ messages: msgs, max_tokens: 10, stream: true, seed: 5,
    response_format: fmt({ enum: ['red', 'green', 'blue'] }) })) {
    text += ch.choices[0]?.delta?.content || '';
    finish = ch.choices[0]?.finish_reason || finish;
  }
  ok(['"red"', '"green"', '"blue"'].includes(text) && finish === 'stop', 'stream, sampled, enum: the deltas spell one value, finish stop', text);
});
if (REAL) {
  const person = { type: 'object', additionalProperties: false, required: ['name', 'age'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 6 }, age: { type: 'integer' } } };
  await check('chat.completions.parse', async () => {
    const r = await c.chat.completions.parse({ messages: msgs, temperature: 0, max_tokens: 200, response_format: fmt(person) });
    const v = r.choices[0].message.parsed;
    ok(v && typeof v.name === 'string' && Number.isInteger(v.age) && Object.keys(v).length === 2 && r.choices[0].finish_reason === 'stop',
       'chat.completions.parse(): message.parsed is an object with a string name and an integer age', r.choices[0].message);
  });
  await check('responses.parse', async () => {
    const r = await c.responses.parse({ input: 'Once upon a time', temperature: 0, max_output_tokens: 200,
      text: { format: { type: 'json_schema', name: 'person', strict: true, schema: person } } });
    const v = r.output_parsed;
    ok(v && typeof v.name === 'string' && Number.isInteger(v.age), 'responses.parse(): output_parsed follows text.format\'s schema', r.output_text);
  });
}

// ---- metrics --------------------------------------------------------------
await check('metrics', async () => {
  const m0 = await waitIdle();
  const r = await c.completions.create({ prompt: 'The cat sat on the mat', temperature: 0, max_tokens: 4 });
  const m1 = await waitIdle();
  const d = (k) => (m1[k] || 0) - (m0[k] || 0);
  const u = r.usage;
  ok(d('rk1828_prompt_tokens_total') === u.prompt_tokens && d('rk1828_generated_tokens_total') === u.completion_tokens &&
     d('rk1828_cached_tokens_total') === u.prompt_tokens_details.cached_tokens,
     '/metrics: prompt, generated and cached token counters grow by the answer\'s usage', { u, m0, m1 });
  ok(finished(m1, r.choices[0].finish_reason) - finished(m0, r.choices[0].finish_reason) === 1 &&
     d('rk1828_ttft_seconds_count') === 1 && d('rk1828_tpot_seconds_count') === (u.completion_tokens > 1 ? 1 : 0) &&
     d('rk1828_prefix_cache_hits_total') + d('rk1828_prefix_cache_misses_total') === 1,
     '/metrics: one more request by finish reason, one TTFT (and TPOT) observation, one prefix hit or miss', { m0, m1 });
  const t = (await raw('GET', '/metrics')).text;
  const fams = ['rk1828_requests_total', 'rk1828_engine_requests_total', 'rk1828_prompt_tokens_total', 'rk1828_generated_tokens_total',
    'rk1828_cached_tokens_total', 'rk1828_ttft_seconds', 'rk1828_tpot_seconds', 'rk1828_sessions_active', 'rk1828_sessions_queued',
    'rk1828_sessions_slots', 'rk1828_prefix_cache_hits_total', 'rk1828_prefix_cache_misses_total', 'rk1828_card_busy_ratio'];
  const missing = fams.filter((f) => !new RegExp(`^# TYPE ${f} (counter|gauge|histogram)$`, 'm').test(t));
  ok(missing.length === 0 && /^rk1828_requests_total\{status="400"\} [1-9]/m.test(t), '/metrics: every family the issue lists, with HELP and TYPE; requests by status', missing);
  const le = [...t.matchAll(/^rk1828_ttft_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)].map((x) => Number(x[2]));
  ok(le.length > 2 && le.every((v, i) => !i || v >= le[i - 1]) && le[le.length - 1] === m1.rk1828_ttft_seconds_count,
     '/metrics: the TTFT histogram is cumulative and its +Inf bucket is the count', le);
  const busy = Object.keys(m1).filter((k) => k.startsWith('rk1828_card_busy_ratio{')).map((k) => m1[k]);
  ok(busy.length === model.cards.length && busy.every((v) => v >= 0 && v <= 1) && (!REAL || busy.every((v) => v > 0)),
     claim('/metrics: a busy fraction in (0, 1] for every card of the plan after generating', '/metrics: a busy fraction in [0, 1] for every card of the plan'),
     { busy, cards: model.cards });
  const g = (k) => (m1[k] || 0) - (m0[k] || 0);
  ok(g('vllm:prefix_cache_queries_total') === u.prompt_tokens && g('vllm:prefix_cache_hits_total') === u.prompt_tokens_details.cached_tokens &&
     m1['vllm:num_requests_waiting'] === 0 && m1['vllm:num_requests_running'] === 0 &&
     m1['vllm:kv_cache_usage_perc'] === 0 && m1['vllm:gpu_cache_usage_perc'] === 0 &&
     ['vllm:num_requests_waiting', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'vllm:prefix_cache_hits_total']
       .every((f) => new RegExp(`^# TYPE ${f} (counter|gauge)$`, 'm').test(t)),
     '/metrics: the gateway families (vllm:*): prefix-cache token counters grow by the answer\'s usage, idle gauges 0', { u, m0, m1 });
  ok(m1.rk1828_sessions_slots === model.parallel, '/metrics: the slots are /v1/models\' parallel', m1.rk1828_sessions_slots);
});

// ---- abort and queue -----------------------------------------------------
// A long greedy stream, consumed in the background until it ends or is
// aborted; st.done tells whether it ended, st.finish its finish_reason.
function longStream(extra = {}) {
  const ac = new AbortController();
  const st = { ac, deltas: 0, done: false, err: null, finish: null };
  st.p = c.chat.completions.create({ messages: msgs, temperature: 0, max_tokens: model.ctx - 16, stream: true, ...extra }, { signal: ac.signal })
    .then(async (s) => {
      for await (const ch of s) {
        if (ch.choices[0]?.delta?.content) st.deltas++;
        if (ch.choices[0]?.finish_reason) st.finish = ch.choices[0].finish_reason;
      }
    })
    .catch((e) => { st.err = e; })
    .finally(() => { st.done = true; });
  return st;
}
// The SDK ends an aborted stream's iteration quietly, or throws its
// APIUserAbortError when the abort came before the answer's headers.
const endedByAbort = (st) => st.done && !st.finish &&
  (!st.err || st.err instanceof OpenAI.APIUserAbortError || st.err.name === 'AbortError');

await check('abort mid-stream', async () => {
  const S = model.parallel;
  const m0 = await waitIdle();
  // Every slot busy: S - 1 holders and the stream to abort.
  const holders = Array.from({ length: S - 1 }, () => longStream());
  await waitMetrics((m) => m.rk1828_sessions_active === S - 1, 120000, `${S - 1} holders running`);
  const victim = longStream();
  await waitMetrics((m) => m.rk1828_sessions_active === S, 120000, 'every slot busy');
  while (victim.deltas < 3 && !victim.done) await new Promise((r) => setTimeout(r, 5));
  victim.ac.abort();
  await victim.p;
  ok(endedByAbort(victim), 'abort: the stream ends at the abort, without a finish_reason',
     { deltas: victim.deltas, finish: victim.finish, err: victim.err?.constructor?.name });
  const next = await c.chat.completions.create({ messages: msgs, ...greedy, max_tokens: 4 });
  const running = holders.filter((h) => !h.done).length;
  ok(next.usage.completion_tokens > 0 && running === S - 1,
     `a request right after the abort gets the freed slot at once: it finished while the ${S - 1} other stream(s) still ran (BR-26)`,
     { usage: next.usage, timings: next.timings, running });
  // With one slot there are no other streams to outlast: the request must
  // not have waited for the aborted one's remaining tokens. Counted, not
  // timed: had the engine generated them before serving it, the tokens
  // generated since m0 would reach the aborted stream's max_tokens.
  if (S === 1) {
    const m = await metrics();
    const gen = m.rk1828_generated_tokens_total - m0.rk1828_generated_tokens_total;
    ok(gen < model.ctx - 16, `one slot: ${gen} tokens generated by the aborted stream and the next request, fewer than the aborted stream's ${model.ctx - 16} max_tokens`,
       { gen, deltas: victim.deltas, usage: next.usage });
  }
  for (const h of holders) h.ac.abort();
  await Promise.all(holders.map((h) => h.p));
  const m1 = await waitIdle();
  ok(!m1.rk1828_sessions_active && !m1.rk1828_sessions_queued && finished(m1, 'cancelled') - finished(m0, 'cancelled') === S,
     `the ${S} aborted streams were cancelled in the engine and freed their sessions`, { m0, m1 });
});

await check('queue full', async () => {
  const S = model.parallel, Q = model.queue;
  const m0 = await waitIdle();
  const held = [];
  for (let i = 0; i < S + Q; i++) held.push(longStream());
  // No sleeps: the 503 is asked for once the engine reports every slot busy
  // and the queue full, while the held streams have hundreds of tokens to go.
  await waitMetrics((m) => m.rk1828_sessions_active === S && m.rk1828_sessions_queued === Q, 120000,
    `${S} running and ${Q} queued`);
  let e = null;
  try { await c.chat.completions.create({ messages: msgs, ...greedy, max_tokens: 4 }); } catch (x) { e = x; }
  ok(e instanceof OpenAI.InternalServerError && e.status === 503 && e.code === 'queue_full' && Number(e.headers.get('retry-after')) >= 1,
     `queue full: with ${S} running and ${Q} queued the next request gets 503 queue_full with Retry-After`, e ? `${e.constructor.name} ${e.status} ${e.message}` : 'no error');
  const busyNow = held.filter((h) => h.done).length;
  ok(busyNow === 0, 'queue full: none of the held requests had ended (the 503 was not a race)', busyNow);
  for (const h of held) h.ac.abort();
  await Promise.all(held.map((h) => h.p));
  const m1 = await waitIdle();
  ok(!m1.rk1828_sessions_active && !m1.rk1828_sessions_queued && finished(m1, 'cancelled') - finished(m0, 'cancelled') === S + Q &&
     held.every(endedByAbort),
     `queue full: the ${S + Q} aborted requests, running or queued, were cancelled and freed everything`, { m0, m1 });
});

await check('health after', async () => {
  const h = await raw('GET', '/health');
  eq(h.json, { status: 'ok' }, 'GET /health is {"status":"ok"} after the tests');
});
done();
