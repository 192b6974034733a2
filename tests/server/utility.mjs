// SPDX-License-Identifier: MIT
// llama-server's utility endpoints against a running server
// (RK1828_SERVER_URL, RK1828_API_KEY): /tokenize (ids equal to
// `rk1828-llm tokenize --ids` on the same model, RK1828_MODEL; pieces that
// join to the text; add_special, parse_special; byte pieces), /detokenize
// (round trip, ids outside the vocabulary), /apply-template (the prompt
// /v1/chat/completions evaluates: its token count is that answer's
// prompt_tokens), /props, the API key and the error envelope on each; and,
// with the real engine, logit_bias on ids /tokenize gave. Prints TAP.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { KEY, REAL, ok, eq, check, done, client, raw, root } from './lib.mjs';

const model = process.env.RK1828_MODEL || path.join(root, '../shared/models/stories260K.gguf');
const J = { 'Content-Type': 'application/json' };
const post = (p, body) => raw('POST', p, typeof body === 'string' ? body : JSON.stringify(body), J);
const cliIds = (text, ...extra) =>
  JSON.parse(execFileSync(path.join(root, 'build/rk1828-llm'), ['tokenize', '-m', model, '-p', text, '--ids', ...extra]).toString());
const c = client();
const text = 'Once upon a time, there was a little girl named Lily.';
let props;

await check('props', async () => {
  const r = await raw('GET', '/props');
  props = r.json;
  const d = props?.default_generation_settings;
  ok(r.status === 200 && d && d.n_ctx > 0 && props.total_slots >= 1 && typeof props.model_path === 'string' &&
     props.model_path.endsWith('.gguf') && typeof props.chat_template === 'string' &&
     typeof props.build_info === 'string' && props.build_info.length > 0,
     'GET /props: default_generation_settings.n_ctx, total_slots, model_path, chat_template, build_info', r.text);
  const m = (await c.models.list()).data[0];
  ok(d?.n_ctx === m.ctx && props.total_slots === m.parallel && props.model_alias === m.id,
     '/props n_ctx, total_slots and model_alias equal /v1/models ctx, parallel and id', { props, m });
  ok(['f32', 'f16', 'q8_0', 'q4_0'].includes(props.kv_type) && props.kv_type === m.kv_type,
     '/props kv_type (the K/V cache type on the cards) is /v1/models kv_type', { props, m });
  eq(d && [d.params.temperature, d.params.top_k, d.params.top_p, d.params.min_p, d.params.repeat_penalty,
    d.params.repeat_last_n, d.params.presence_penalty, d.params.frequency_penalty],
     [0.8, 40, 0.95, 0, 1, 64, 0, 0],
     '/props params: the sampling defaults (0.8, 40, 0.95, min_p 0, repeat 1/64, penalties 0)');
  eq(d?.params.samplers, ['penalties', 'top_k', 'top_p', 'min_p', 'temperature'], '/props samplers: the chain order');
});

let ids;
await check('tokenize', async () => {
  const r = await post('/tokenize', { content: text });
  ids = r.json?.tokens;
  ok(r.status === 200 && Array.isArray(ids) && ids.length > 5 && ids.every(Number.isInteger),
     'POST /tokenize {content}: {"tokens": [ids]}', r.text);
  const want = cliIds(text, '--parse-special');
  const bos = want[0];
  eq(ids, want.slice(1), '/tokenize (add_special false) = `rk1828-llm tokenize --ids --parse-special` without its BOS');
  const s = await post('/tokenize', { content: text, add_special: true, parse_special: false });
  eq(s.json?.tokens, cliIds(text), '/tokenize add_special, parse_special false = `rk1828-llm tokenize --ids`');
  ok(s.json?.tokens?.[0] === bos && bos === 1, 'add_special prepends BOS (id 1 for stories260K)', s.json);
  const p = await post('/tokenize', { content: text, with_pieces: true });
  const t = p.json?.tokens || [];
  eq(t.map((x) => x.id), ids, 'with_pieces: the same ids');
  ok(t.length && t.every((x) => typeof x.piece === 'string'), 'with_pieces: ASCII pieces are strings', t);
  eq(t.map((x) => x.piece).join(''), ' ' + text, 'with_pieces: the pieces join to the text (SPM prepends one space)');
  const e = await post('/tokenize', { content: '' });
  eq([e.status, e.json?.tokens], [200, []], '/tokenize of "" is []');
});

await check('tokenize special and bytes', async () => {
  const a = await post('/tokenize', { content: '<s>hi', with_pieces: true });
  const b = await post('/tokenize', { content: '<s>hi', parse_special: false });
  ok(a.json?.tokens?.[0]?.id === 1 && a.json.tokens[0].piece === '<s>',
     'parse_special (default true): "<s>" is BOS, piece "<s>"', a.json);
  ok(!b.json?.tokens?.includes(1) && b.json?.tokens?.length > 1, 'parse_special false: "<s>" is plain text', b.json);
  // stories260K has no token for 'á': its UTF-8 bytes C3 A1 are byte tokens
  const u = await post('/tokenize', { content: 'á', with_pieces: true });
  const pieces = (u.json?.tokens || []).map((x) => x.piece);
  ok(pieces.some((x) => Array.isArray(x)) && JSON.stringify(pieces.filter((x) => Array.isArray(x)).flat()) === '[195,161]',
     'a piece that is not valid UTF-8 is its byte values ([195], [161] for "á")', u.json);
});

await check('detokenize', async () => {
  const r = await post('/detokenize', { tokens: ids });
  eq([r.status, r.json?.content], [200, text], 'POST /detokenize of /tokenize\'s ids gives the text back');
  const w = await post('/detokenize', { tokens: cliIds(text) });
  eq(w.json?.content, '<s> ' + text, 'with BOS: "<s>", then the text with its SPM space (llama.cpp strips only a first piece\'s)');
  const e = await post('/detokenize', { tokens: [] });
  eq(e.json?.content, '', '/detokenize of [] is ""');
  const u = await post('/tokenize', { content: 'á' });
  const d = await post('/detokenize', { tokens: u.json?.tokens });
  eq(d.json?.content, 'á', 'the two byte tokens of "á" detokenize to "á"');
  const h = await post('/detokenize', { tokens: u.json?.tokens?.slice(-1) });
  eq(h.json?.content, '\ufffd', 'a lone continuation byte detokenizes to U+FFFD');
});

await check('apply-template', async () => {
  const messages = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Once upon a time' }];
  const r = await post('/apply-template', { messages });
  ok(r.status === 200 && typeof r.json?.prompt === 'string' && r.json.prompt.includes('Once upon a time') &&
     r.json.prompt.includes('Be brief.'), 'POST /apply-template {messages}: {"prompt"} with the messages', r.text);
  if (props?.chat_template === '')
    eq(r.json?.prompt, 'Be brief.\nOnce upon a time', 'no template (stories260K): the contents joined by a newline');
  const tk = await post('/tokenize', { content: r.json?.prompt ?? '', add_special: true });
  const ch = await c.chat.completions.create({ messages, temperature: 0, max_tokens: 1 });
  eq(tk.json?.tokens?.length, ch.usage.prompt_tokens,
     '/tokenize (add_special) of the /apply-template prompt has the chat completion\'s prompt_tokens');
});

const bad = [
  ['/tokenize', '{"content": ', null, 'invalid JSON'],
  ['/tokenize', '[1]', null, 'not an object'],
  ['/tokenize', {}, 'content', 'no content'],
  ['/tokenize', { content: 5 }, 'content', 'content a number'],
  ['/tokenize', { content: 'x', with_pieces: 'yes' }, 'with_pieces', 'with_pieces a string'],
  ['/tokenize', { content: 'x', add_special: 1 }, 'add_special', 'add_special a number'],
  ['/detokenize', {}, 'tokens', 'no tokens'],
  ['/detokenize', { tokens: [1, -1] }, 'tokens', 'id -1'],
  ['/detokenize', { tokens: [1, 1 << 20] }, 'tokens', 'id 2^20, outside the vocabulary'],
  ['/detokenize', { tokens: ['a'] }, 'tokens', 'a string id'],
  ['/apply-template', {}, 'messages', 'no messages'],
  ['/apply-template', { messages: [{ role: 'wizard', content: 'x' }] }, 'messages', 'an unknown role'],
];
for (const [p, body, param, what] of bad)
  await check(`400 ${p} ${what}`, async () => {
    const r = await post(p, body);
    const e = r.json?.error;
    ok(r.status === 400 && e?.type === 'invalid_request_error' && (param ? e.param?.startsWith(param) : e.param === null) &&
       typeof e.message === 'string', `400 ${p}: ${what} (OpenAI error envelope, param ${param})`, r.text);
  });
await check('405 and auth', async () => {
  const g = await raw('GET', '/tokenize');
  ok(g.status === 405 && /POST/.test(g.headers.allow || ''), 'GET /tokenize is 405 with Allow: POST', g.headers);
  const p = await post('/props', {});
  ok(p.status === 405, 'POST /props is 405', p.status);
  if (KEY) {
    for (const [m, q] of [['POST', '/tokenize'], ['POST', '/detokenize'], ['POST', '/apply-template'], ['GET', '/props']]) {
      const r = await raw(m, q, m === 'POST' ? '{"content":"x","tokens":[],"messages":[]}' : undefined,
        { ...J, Authorization: 'Bearer wrong' });
      ok(r.status === 401 && r.json?.error?.code === 'invalid_api_key', `${m} ${q} with a wrong key is 401`, r.text);
    }
  }
});

// logit_bias on an id from /tokenize forces it through the real engine.
if (REAL) {
  await check('logit_bias through the engine', async () => {
    const t = (await post('/tokenize', { content: text, with_pieces: true })).json.tokens;
    const forced = await c.completions.create({ prompt: 'Once upon a time', temperature: 0, max_tokens: 4,
      logit_bias: [[t[1].id, 100]] });
    ok(forced.usage.completion_tokens === 4 && forced.choices[0].text === t[1].piece.repeat(4),
       `logit_bias [[${t[1].id}, 100]]: 4 tokens, each ${JSON.stringify(t[1].piece)}`, forced.choices[0].text);
  });
}
done();
