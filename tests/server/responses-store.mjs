// SPDX-License-Identifier: MIT
// Stored responses through the official openai SDK, as the AI SDK's
// Responses conversations use them: with store (the default: true) a
// response can be retrieved (GET /v1/responses/{id}) and deleted (DELETE),
// a next turn names it with previous_response_id or refers to its items
// with item_reference; with store false, or once deleted, none of that
// resolves: a 404 for GET/DELETE, a 400 naming previous_response_id or
// input[i].id for a create. "store" is echoed. Works with any engine
// (the texts are not compared with a model's). Prints TAP.
import { KEY, ok, eq, check, done, client, raw, require } from './lib.mjs';

const OpenAI = require('openai');
const c = client();
const g = { temperature: 0, max_output_tokens: 6 };

async function err(fn) {
  try { await fn(); return null; } catch (e) { return e; }
}

let first;
await check('a stored response comes back from GET', async () => {
  first = await c.responses.create({ input: 'Once upon a time', ...g });
  ok(first.store === true && /^resp_/.test(first.id) && first.previous_response_id === null,
     'store defaults to true and is echoed', { store: first.store, id: first.id });
  const back = await c.responses.retrieve(first.id);
  eq(back, first, 'responses.retrieve(id): the response as created');
  const s = await c.responses.stream({ input: 'Once upon a time', ...g }).finalResponse();
  const sback = await c.responses.retrieve(s.id);
  const strip = (o) => JSON.parse(JSON.stringify(o, (k, v) => (k === 'parsed' ? undefined : v)));
  eq(sback.output, strip(s.output), 'a streamed response is stored too: retrieve gives its output (the SDK\'s parsed fields aside)');
});

await check('previous_response_id continues the stored conversation', async () => {
  const next = await c.responses.create({ previous_response_id: first.id, input: 'and then', ...g });
  const alone = await c.responses.create({ input: 'and then', store: false, ...g });
  ok(next.previous_response_id === first.id && next.status !== 'failed' &&
     next.usage.input_tokens >= first.usage.input_tokens + first.usage.output_tokens + alone.usage.input_tokens - 8,
     'the next turn\'s prompt holds the first turn\'s input and output (input_tokens)',
     { first: first.usage, next: next.usage, alone: alone.usage });
  const third = await c.responses.create({ previous_response_id: next.id, input: 'the end', ...g });
  ok(third.usage.input_tokens > next.usage.input_tokens, 'a chain of three: each turn holds the ones before', third.usage);
});

await check('item_reference (the AI SDK\'s second turn with store true)', async () => {
  const msg = first.output.find((it) => it.type === 'message');
  const r = await c.responses.create({ input: [{ role: 'user', content: 'Once upon a time' }, { type: 'item_reference', id: msg.id },
    { role: 'user', content: 'and then' }], ...g });
  ok(r.status !== 'failed' && r.usage.input_tokens > first.usage.input_tokens, 'an item_reference to a stored message is taken', r.usage);
});

await check('store false: neither GET nor references resolve', async () => {
  const r = await c.responses.create({ input: 'Once upon a time', store: false, ...g });
  ok(r.store === false, 'store false is echoed', r.store);
  const e = await err(() => c.responses.retrieve(r.id));
  ok(e instanceof OpenAI.NotFoundError && e.status === 404 && e.error?.type === 'invalid_request_error' && e.message.includes(r.id),
     'GET of a response not stored: 404 NotFoundError naming it', e?.message);
  const msg = r.output.find((it) => it.type === 'message');
  const e2 = await err(() => c.responses.create({ input: [{ role: 'user', content: 'x' }, { type: 'item_reference', id: msg.id }], ...g }));
  ok(e2 instanceof OpenAI.BadRequestError && e2.param === 'input[1].id' && /not in the store/.test(e2.message),
     'an item_reference to a response not stored: 400 naming input[1].id', e2?.message);
  const e3 = await err(() => c.responses.create({ previous_response_id: r.id, input: 'x', ...g }));
  ok(e3 instanceof OpenAI.BadRequestError && e3.param === 'previous_response_id' && /not in the store/.test(e3.message),
     'previous_response_id of a response not stored: 400 naming previous_response_id', e3?.message);
});

await check('DELETE', async () => {
  const r = await c.responses.create({ input: 'Once upon a time', ...g });
  const d = await raw('DELETE', '/v1/responses/' + r.id);
  ok(d.status === 200 && JSON.stringify(d.json) === JSON.stringify({ id: r.id, object: 'response', deleted: true }),
     'DELETE /v1/responses/{id}: 200 {id, object: "response", deleted: true}', d.text);
  const e = await err(() => c.responses.retrieve(r.id));
  ok(e instanceof OpenAI.NotFoundError, 'then GET is a 404', e?.message);
  const e2 = await err(() => c.responses.delete(r.id));
  ok(e2 instanceof OpenAI.NotFoundError, 'and a second delete (responses.delete) is a 404', e2?.message);
  const e3 = await err(() => c.responses.create({ previous_response_id: r.id, input: 'x', ...g }));
  ok(e3 instanceof OpenAI.BadRequestError && e3.param === 'previous_response_id', 'a deleted previous_response_id: 400', e3?.message);
  const r2 = await c.responses.create({ input: 'Once upon a time', ...g });
  await c.responses.delete(r2.id);
  const e4 = await err(() => c.responses.retrieve(r2.id));
  ok(e4 instanceof OpenAI.NotFoundError, 'responses.delete(id) (the SDK\'s) deletes: GET is then a 404', e4?.message);
  const p = await raw('POST', '/v1/responses/' + r2.id, '{}', { 'Content-Type': 'application/json' });
  ok(p.status === 405 && p.headers.allow === 'GET, DELETE, OPTIONS' && p.json?.error?.code === 'method_not_allowed',
     'POST /v1/responses/{id}: 405 with Allow: GET, DELETE, OPTIONS', p.status + ' ' + p.headers.allow);
  if (KEY) {
    const u = await raw('GET', '/v1/responses/' + first.id, undefined, { Authorization: 'Bearer wrong' });
    ok(u.status === 401, 'GET /v1/responses/{id} needs the API key', u.status);
  }
});
done();
