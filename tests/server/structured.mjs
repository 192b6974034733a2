// SPDX-License-Identifier: MIT
// Structured outputs as the SDK's zod helpers write them (zod 4's
// toJSONSchema: .email(), .uuid(), .regex(), .datetime() become
// "pattern", number ranges "minimum"/"maximum"), alone and together with
// tools: the reply is either tool calls or a document of the schema, on
// chat completions (chat.completions.parse with zodResponseFormat and
// zodFunction) and on /v1/responses (responses.parse with zodTextFormat).
// With the scripted engine (RK1828_ENGINE=scripted) the replies are the
// recorded outputs of tests/server/fake/replies.txt, which the scripted
// engine feeds to the request's matcher: a valid document or call comes
// back parsed, a reply the schema refuses (an address without '@', a
// score of 150, an unknown or loose tool call) fails with the matcher's
// error, which shows which schema reached the engine. With a real engine
// (the guest's story model) every reply must be a valid document or a
// valid call. Prints TAP.
import { REAL, ok, check, done, client, require } from './lib.mjs';

const OpenAI = require('openai');
const { z } = require('zod');
const { zodResponseFormat, zodTextFormat, zodFunction } = require('openai/helpers/zod');
const c = client();

const Card = z.object({
  email: z.string().email().max(40),
  id: z.string().uuid(),
  code: z.string().regex(/^[A-Z]{2}-\d{3}$/),
  score: z.number().min(0).max(100),
  when: z.string().datetime().max(24),
});
const weather = zodFunction({ name: 'get_weather', parameters: z.object({ location: z.string().max(20) }) });
const user = (t) => [{ role: 'user', content: t }];
const fmt = zodResponseFormat(Card, 'card');
const base = { temperature: 0, max_tokens: 400, response_format: fmt, tools: [weather] };

// A document of Card, checked by zod itself.
const isCard = (v) => Card.safeParse(v).success;
// A whole call of get_weather with its strict arguments.
const isWeather = (t) => {
  try {
    const a = JSON.parse(t.function.arguments);
    return t.type === 'function' && t.function.name === 'get_weather' && Object.keys(a).length === 1 &&
      typeof a.location === 'string' && a.location.length <= 20;
  } catch { return false; }
};

await check('schema and tools: a document', async () => {
  if (REAL) {
    // Parallel calls: the story model writes calls until max_tokens; the
    // ones before the cut are whole, the last one may be cut off.
    const r = await c.chat.completions.create({ messages: user('ZOD-DOC: a card please'), ...base });
    const ch = r.choices[0], calls = ch.message.tool_calls || [];
    let doc = null;
    try { doc = JSON.parse(ch.message.content); } catch { /* a call */ }
    ok((isCard(doc) && ch.finish_reason === 'stop' && !calls.length) ||
       (calls.length >= 1 && calls.slice(0, ch.finish_reason === 'tool_calls' ? calls.length : -1).every(isWeather) &&
        ['tool_calls', 'length'].includes(ch.finish_reason)),
       'schema and tools, parallel calls, real engine: a Card (zod parses it), or get_weather calls with strict arguments (all whole but one cut by max_tokens)', ch);
    return;
  }
  const r = await c.chat.completions.parse({ messages: user('ZOD-DOC: a card please'), ...base });
  const ch = r.choices[0];
  ok(ch.finish_reason === 'stop' && !ch.message.tool_calls?.length && isCard(ch.message.parsed) &&
     ch.message.parsed.email === 'ada@example.org' && ch.message.parsed.score === 42.5,
     'schema (zod email, uuid, regex, number range, datetime) with tools: 200, no calls, message.parsed is the document', ch);
});

await check('schema and tools: a call', async () => {
  const r = await c.chat.completions.parse({ messages: user('ZOD-CALL: weather in Paris?'), ...base,
    parallel_tool_calls: false });
  const ch = r.choices[0];
  if (REAL) {
    ok((ch.message.parsed && isCard(ch.message.parsed)) ||
       (ch.finish_reason === 'tool_calls' && ch.message.tool_calls.length === 1 && isWeather(ch.message.tool_calls[0])),
       'schema and tools, one call, real engine: a Card or one whole get_weather call, finish tool_calls', ch);
    return;
  }
  const t = ch.message.tool_calls?.[0];
  ok(ch.finish_reason === 'tool_calls' && ch.message.tool_calls.length === 1 && isWeather(t) &&
     JSON.parse(t.function.arguments).location === 'Paris' && ch.message.parsed == null,
     'schema with tools: a recorded call comes back as tool_calls with finish tool_calls', ch);
});

if (!REAL) {
  const refused = async (trigger, extra, what) => {
    try {
      const r = await c.chat.completions.create({ messages: user(trigger), ...base, ...extra });
      ok(false, what, r.choices[0]);
    } catch (e) {
      ok(e instanceof OpenAI.APIError && e.status === 500 && /does not continue the JSON document/.test(e.message),
         what, e.message);
    }
  };
  await refused('ZOD-BADEMAIL', {}, 'the email pattern reaches the engine: an address without "@" is refused at the space');
  await refused('ZOD-RANGE', {}, 'the number range reaches the engine: a score of 150 is refused');
  await refused('ZOD-BADTOOL', {}, 'a call of a tool that was not offered is refused');
  await refused('ZOD-LOOSE', {}, 'a strict tool\'s arguments follow its parameters: an extra "unit" is refused');
  await refused('ZOD-CALL', { tool_choice: 'none' }, 'tool_choice none with a schema: the schema only, a call is refused');
  await check('tool_choice required with a schema', async () => {
    const time = zodFunction({ name: 'get_time', parameters: z.object({ zone: z.string() }) });
    const r = await c.chat.completions.create({ messages: user('REQUIRED-ARGS: the time'), ...base,
      tools: [weather, time], tool_choice: 'required' });
    const ch = r.choices[0];
    ok(ch.finish_reason === 'tool_calls' && ch.message.tool_calls?.[0]?.function.name === 'get_time' &&
       JSON.parse(ch.message.tool_calls[0].function.arguments).zone === 'UTC',
       'tool_choice required with a schema: the call the reply goes on with', ch);
  });
  await check('streamed: schema and tools', async () => {
    let content = '', finish = null;
    for await (const ch of await c.chat.completions.create({ messages: user('ZOD-DOC: a card'), ...base, stream: true })) {
      content += ch.choices[0]?.delta?.content || '';
      finish = ch.choices[0]?.finish_reason || finish;
    }
    ok(isCard(JSON.parse(content)) && finish === 'stop', 'stream: the deltas spell the document, finish stop', content);
  });
}

await check('responses: text.format with tools', async () => {
  const tool = { type: 'function', name: 'get_weather', strict: true,
    parameters: { type: 'object', properties: { location: { type: 'string', maxLength: 20 } }, required: ['location'],
      additionalProperties: false } };
  const r = await c.responses.parse({ input: 'ZOD-DOC: a card', temperature: 0, max_output_tokens: 400,
    text: { format: zodTextFormat(Card, 'card') }, tools: [tool], parallel_tool_calls: false });
  const calls = r.output.filter((o) => o.type === 'function_call');
  if (REAL) {
    ok((r.output_parsed && isCard(r.output_parsed)) ||
       (calls.length === 1 && calls[0].status === 'completed' && isWeather({ type: 'function', function: calls[0] })),
       'responses, real engine: output_parsed is a Card or one completed get_weather function_call', r.output);
    return;
  }
  ok(isCard(r.output_parsed) && r.output_parsed.code === 'AB-123' && !calls.length,
     'responses.parse with zodTextFormat and tools: output_parsed is the document', r.output);
  const k = await c.responses.create({ input: 'ZOD-CALL: weather', temperature: 0, max_output_tokens: 400,
    text: { format: zodTextFormat(Card, 'card') }, tools: [tool] });
  const f = k.output.find((o) => o.type === 'function_call');
  ok(f && f.name === 'get_weather' && f.status === 'completed' && JSON.parse(f.arguments).location === 'Paris',
     'responses with text.format and tools: a recorded call is a function_call item', k.output);
});

await check('schemas alone: pattern and number range', async () => {
  if (!REAL)
    return;
  const S = z.object({ code: z.string().regex(/^[A-Z]{2}-\d{3}$/), n: z.number().gt(0.5).lt(9.5).multipleOf(0.25) });
  for (const seed of [1, 2, 3]) {
    const r = await c.chat.completions.parse({ messages: user('Once upon a time'), temperature: 1, seed, max_tokens: 200,
      response_format: zodResponseFormat(S, 's') });
    const v = r.choices[0].message.parsed;
    ok(v && /^[A-Z]{2}-\d{3}$/.test(v.code) && v.n > 0.5 && v.n < 9.5 && v.n * 4 === Math.round(v.n * 4) &&
       r.choices[0].finish_reason === 'stop',
       `real engine, seed ${seed}: the code matches ^[A-Z]{2}-\\d{3}$ and n is in (0.5, 9.5), a multiple of 0.25`, r.choices[0].message);
  }
});

const bad = async (what, body, param, re) => {
  try {
    await c.chat.completions.create({ messages: user('x'), max_tokens: 4, ...body });
    ok(false, what);
  } catch (e) {
    ok(e instanceof OpenAI.BadRequestError && e.param === param && re.test(e.message), what, { param: e.param, msg: e.message });
  }
};
await bad('400: a look-ahead in a pattern names itself', { response_format: zodResponseFormat(z.object({ d: z.iso.duration() }), 'd') },
  'response_format.json_schema.schema', /look-ahead '\(\?!' is not supported/);
await bad('400: multipleOf 0.01 (not exact in binary) is refused, not widened',
  { response_format: zodResponseFormat(z.object({ p: z.number().multipleOf(0.01) }), 'p') },
  'response_format.json_schema.schema', /'multipleOf' 0\.01 is not supported/);
await bad('400: a strict tool whose parameters we cannot follow, with a schema, names its parameters',
  { response_format: fmt, tools: [{ type: 'function', function: { name: 'f', strict: true,
    parameters: { type: 'object', properties: { x: { not: {} } } } } }] },
  'tools[0].function.parameters', /'not' is not supported \(at properties\.x\)/);
done();
