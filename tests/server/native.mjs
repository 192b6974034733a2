// SPDX-License-Identifier: MIT
// llama-server's native POST /completion against a running server
// (RK1828_SERVER_URL, RK1828_API_KEY), with plain HTTP (the openai SDK has
// no native endpoint): the result's fields and types, stop_type limit /
// word with tokens_predicted and stopping_word, the stream's chunks (no
// [DONE]) against the whole answer, token-id and mixed prompts against the
// text (ids from `rk1828-llm tokenize --ids`), a batch's array of results,
// n_probs entries, response_fields, and the 400s in the OpenAI envelope.
// With RK1828_ENGINE=scripted the text does not depend on the prompt: the
// names claim only what the HTTP layer shows. Prints TAP.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { KEY, REAL, ok, eq, check, done, raw, root, claim } from './lib.mjs';

const model = process.env.RK1828_MODEL || path.join(root, '../shared/models/stories260K.gguf');
const TEXT = 'Once upon a time';
const post = (body, extra = {}) => raw('POST', '/completion', JSON.stringify(body),
  { 'Content-Type': 'application/json', ...extra });
const greedy = { temperature: 0, seed: 42, ignore_eos: true };
const ids = JSON.parse(execFileSync(path.join(root, 'build/rk1828-llm'),
  ['tokenize', '-m', model, '--ids', '-p', TEXT]).toString());

// SSE "data: {...}" events of a stream's body.
const events = (text) => text.split('\n\n').filter((b) => b.trim()).map((b) => {
  ok(b.startsWith('data: '), 'stream event is "data: ..."', b);
  return JSON.parse(b.slice(6));
});
const isErr = (r, status, param) => r.status === status && r.json && r.json.error &&
  typeof r.json.error.message === 'string' && r.json.error.type === 'invalid_request_error' &&
  (param === undefined || r.json.error.param === param);

let ctx = 0, whole;
await check('models', async () => {
  const r = await raw('GET', '/v1/models');
  ctx = r.json.data[0].ctx;
  ok(ctx > 0, 'the context size from /v1/models', r.json);
});

await check('non-stream fields', async () => {
  const r = await post({ prompt: TEXT, n_predict: 8, ...greedy });
  const b = whole = r.json;
  ok(r.status === 200 && typeof b.content === 'string' && b.content.length > 0 &&
     Array.isArray(b.tokens) && b.tokens.length === 0 && b.stop === true &&
     typeof b.id_slot === 'number' && b.index === 0 && b.truncated === false &&
     typeof b.has_new_line === 'boolean' && b.has_new_line === b.content.includes('\n'),
     'content, tokens [] without return_tokens, stop true, index 0, has_new_line as the content has one', b);
  if (process.env.RK1828_MODEL_ID) eq(b.model, process.env.RK1828_MODEL_ID, 'model is the alias');
  ok(b.stop_type === 'limit' && b.stopping_word === '' && b.tokens_predicted === 8 &&
     b.timings.predicted_n === 8, 'n_predict 8: stop_type limit, tokens_predicted 8, timings.predicted_n 8', b);
  ok(b.tokens_evaluated === ids.length && b.tokens_cached === ids.length + 8 &&
     b.timings.prompt_n + b.timings.cache_n === ids.length,
     `tokens_evaluated is the ${ids.length} prompt ids, tokens_cached prompt + predicted, prompt_n + cache_n the prompt`, b);
  ok(b.prompt === '<s> ' + TEXT, 'prompt is the detokenized prompt with the BOS text', b.prompt);
  const gs = b.generation_settings;
  ok(gs.n_predict === 8 && gs.seed === 42 && gs.temperature === 0 && gs.stream === false &&
     gs.n_probs === 0 && Array.isArray(gs.stop) && typeof gs.top_k === 'number' && typeof gs.top_p === 'number',
     'generation_settings: n_predict 8, seed 42, temperature 0, stream false', gs);
  ok(['prompt_n', 'prompt_ms', 'prompt_per_token_ms', 'prompt_per_second', 'predicted_n', 'predicted_ms',
      'predicted_per_token_ms', 'predicted_per_second'].every((k) => typeof b.timings[k] === 'number'),
     'timings has the eight llama-server figures as numbers', b.timings);
});

await check('return_tokens', async () => {
  const b = (await post({ prompt: TEXT, n_predict: 6, return_tokens: true, ...greedy })).json;
  ok(b.tokens.length === 6 && b.tokens.every((t) => Number.isInteger(t) && t >= 0) &&
     b.content === claim(whole.content.slice(0, b.content.length), b.content),
     'return_tokens: 6 integer ids for n_predict 6; ' + claim('the greedy text is the start of the 8-token one', 'scripted'), b);
});

await check('n_predict 0', async () => {
  const b = (await post({ prompt: TEXT, n_predict: 0 })).json;
  ok(b.content === '' && b.tokens_predicted === 0 && b.stop_type === 'limit',
     'n_predict 0: no text, tokens_predicted 0, stop_type limit', b);
});

await check('stream', async () => {
  const r = await post({ prompt: TEXT, n_predict: 8, stream: true, ...greedy });
  ok(r.status === 200 && /^text\/event-stream/.test(r.headers['content-type']) && !r.text.includes('[DONE]'),
     'stream: text/event-stream, no data: [DONE] (as llama-server on /completion)', r.text.slice(-200));
  const ev = events(r.text), last = ev[ev.length - 1], body = ev.slice(0, -1);
  ok(ev.length >= 2 && body.every((e) => e.stop === false && typeof e.content === 'string' &&
     Array.isArray(e.tokens) && e.index === 0) && last.stop === true,
     'chunks have stop false, content, tokens and index; the last one stop true', ev);
  ok(body.reduce((n, e) => n + e.tokens.length, 0) === 8 && last.content === '' && last.tokens.length === 0,
     "the chunks' tokens are the 8 generated; the last chunk's content and tokens are empty", ev);
  eq(ev.map((e) => e.content).join(''), whole.content, 'the chunks concatenate to the non-stream content (same seed, temperature 0)');
  ok(last.stop_type === 'limit' && last.tokens_predicted === 8 && last.generation_settings.stream === true &&
     last.timings.predicted_n === 8, 'the last chunk: stop_type limit, tokens_predicted 8, settings and timings', last);
});

await check('token ids', async () => {
  const b = (await post({ prompt: ids, n_predict: 8, ...greedy })).json;
  ok(b.tokens_evaluated === ids.length && b.content === claim(whole.content, b.content),
     `the prompt as its ${ids.length} ids (with BOS) ` + claim('gives the text prompt\'s content', 'is evaluated as given'), b);
  const m = (await post({ prompt: [...ids, ' there was'], n_predict: 4, ...greedy })).json;
  const t = JSON.parse(execFileSync(path.join(root, 'build/rk1828-llm'),
    ['tokenize', '-m', model, '--ids', '--no-bos', '-p', ' there was']).toString());
  eq(m.tokens_evaluated, ids.length + t.length, 'ids then a string: the string is tokenized without BOS after the ids');
});

await check('batch', async () => {
  const r = await post({ prompt: [TEXT, TEXT], n_predict: 6, ...greedy });
  ok(r.status === 200 && Array.isArray(r.json) && r.json.length === 2 && r.json[0].index === 0 &&
     r.json[1].index === 1 && r.json[0].content === r.json[1].content && r.json[0].content.length > 0 &&
     r.json[1].tokens_predicted === 6, 'a batch of 2 identical prompts: an array of 2 results, index 0 and 1, equal contents', r.json);
  const m = await post({ prompt: [ids, TEXT], n_predict: 6, ...greedy });
  ok(m.status === 200 && m.json.length === 2 && m.json[0].content === m.json[1].content &&
     m.json[0].tokens_evaluated === m.json[1].tokens_evaluated,
     'a batch of the ids and the text: equal contents and tokens_evaluated', m.json);
  const one = await post({ prompt: [TEXT], n_predict: 2 });
  ok(one.status === 200 && !Array.isArray(one.json) && one.json.index === 0,
     'a batch of one prompt answers one object (as llama-server)', one.json);
});

await check('stop word', async () => {
  const c = whole.content, word = c.split(/\s+/).filter((w) => w.length >= 2)[1] || '', at = c.indexOf(word);
  const b = (await post({ prompt: TEXT, n_predict: 8, stop: [word, 'never-there'], ...greedy })).json;
  ok(word.length >= 2 && at > 0 && b.stop_type === 'word' && b.stopping_word === word && b.content === c.slice(0, at),
     `stop ["${word}", ...]: stop_type word, stopping_word "${word}", the text before it`, { c, b });
  ok(b.generation_settings.stop.length === 2 && b.generation_settings.stop[0] === word,
     'generation_settings.stop lists the stop strings', b.generation_settings);
});

await check('structured outputs', async () => {
  let r = await post({ prompt: TEXT, n_predict: 10, json_schema: { const: 'foooooo' }, ...greedy });
  ok(r.status === 200 && (!REAL || (r.json.content === '"foooooo"' && r.json.stop_type === 'eos')),
     'json_schema {const: "foooooo"}: 200' + (REAL ? ', content "foooooo", ended as the document closed' : ''), r.json);
  r = await post({ prompt: TEXT, n_predict: 8, response_format: { type: 'json_object' }, ...greedy });
  ok(r.status === 200 && (!REAL || r.json.content.startsWith('{')),
     'response_format json_object: 200' + (REAL ? ', content starts with {' : ''), r.json);
  r = await post({ prompt: TEXT, json_schema: { type: 'hiccup' } });
  ok(isErr(r, 400, 'json_schema'), "400 for json_schema {type: 'hiccup'}", r.json);
  r = await post({ prompt: TEXT, grammar: 'root ::= "a"{5,5}' });
  ok(isErr(r, 400, 'grammar') && /json_schema/.test(r.json.error.message),
     '400 for a GBNF grammar, pointing to json_schema', r.json);
  r = await post({ prompt: TEXT, n_predict: 2, grammar: '' });
  ok(r.status === 200, "grammar '' is no grammar: 200", r.json);
  r = await post({ prompt: TEXT, response_format: { type: 'sound' } });
  ok(isErr(r, 400, 'response_format.type'), "400 for response_format type 'sound' (param response_format.type)", r.json);
});

await check('n_probs', async () => {
  const b = (await post({ prompt: TEXT, n_predict: 4, n_probs: 3, return_tokens: true, ...greedy })).json;
  const cp = b.completion_probabilities;
  ok(Array.isArray(cp), 'n_probs: completion_probabilities is an array', b);
  if (REAL) {
    ok(cp.length === 4 && cp.every((e, i) => e.id === b.tokens[i] && typeof e.token === 'string' &&
       e.logprob <= 0 && Array.isArray(e.bytes) && e.top_logprobs.length === 3 &&
       e.top_logprobs.every((t) => Number.isInteger(t.id) && typeof t.token === 'string' && t.logprob <= 0 &&
         Array.isArray(t.bytes)) && e.top_logprobs[0].id === e.id &&
       Math.abs(e.top_logprobs[0].logprob - e.logprob) < 1e-6),
       'n_probs 3: 4 entries whose id is the generated token, logprob <= 0, 3 top_logprobs {id, token, logprob, bytes}, the greedy pick first', cp);
    const s = events((await post({ prompt: TEXT, n_predict: 4, n_probs: 2, stream: true, ...greedy })).text);
    ok(s.slice(0, -1).every((e) => e.completion_probabilities.length === e.tokens.length &&
       e.completion_probabilities.every((p, i) => p.id === e.tokens[i] && p.top_logprobs.length === 2)),
       "stream n_probs 2: each chunk's completion_probabilities match its tokens", s);
  }
});

await check('response_fields', async () => {
  const b = (await post({ prompt: TEXT, n_predict: 5,
    response_fields: ['content', 'generation_settings/n_predict', 'prompt', 'timings/no_such'] })).json;
  ok(Object.keys(b).length === 3 && typeof b.content === 'string' && b['generation_settings/n_predict'] === 5 &&
     b.prompt === '<s> ' + TEXT, 'response_fields: only content, generation_settings/n_predict (flattened) and prompt; a missing path is left out', b);
});

await check('errors', async () => {
  let r = await post({ prompt: [ids[0], {}] });
  ok(isErr(r, 400, 'prompt[1]') || isErr(r, 400, 'prompt[0]'), '400 for an object inside the prompt', r.json);
  r = await post({ prompt: [1, 10000000] });
  ok(isErr(r, 400, 'prompt') && /outside the vocabulary/.test(r.json.error.message), '400 for a token id outside the vocabulary', r.json);
  r = await post({ prompt: TEXT, n_predict: -2 });
  ok(isErr(r, 400, 'n_predict'), '400 for n_predict -2', r.json);
  r = await post({ prompt: new Array(ctx).fill(ids[1]) });
  ok(isErr(r, 400, 'prompt') && r.json.error.code === 'context_length_exceeded',
     `400 context_length_exceeded for a prompt of ${ctx} ids (the whole context)`, r.json);
  r = await post({ prompt: [TEXT, TEXT], stream: true });
  ok(isErr(r, 400, 'stream'), '400 for stream with a batch of 2 prompts', r.json);
  r = await post({ prompt: TEXT, post_sampling_probs: true });
  ok(isErr(r, 400, 'post_sampling_probs'), '400 for post_sampling_probs (not supported)', r.json);
  r = await raw('POST', '/completion', '{"prompt":', { 'Content-Type': 'application/json' });
  ok(isErr(r, 400), '400 for invalid JSON', r.json);
  r = await raw('GET', '/completion');
  ok(r.status === 405 && r.headers.allow === 'POST, OPTIONS', 'GET /completion is a 405 with Allow: POST', r.status);
  if (KEY) {
    r = await raw('POST', '/completion', JSON.stringify({ prompt: TEXT }), { Authorization: 'Bearer wrong' });
    ok(r.status === 401 && r.json.error.code === 'invalid_api_key', '401 with a wrong API key (--api-key)', r.json);
  }
});

done();
