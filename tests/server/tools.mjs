// SPDX-License-Identifier: MIT
// Function calling through the official openai SDK: tools and tool_choice
// in, tool_calls out (whole and streamed as deltas, which the SDK's stream
// helper and its runTools() agent loop put together), tool results sent
// back, and the validation of every tool field. With the scripted engine
// (RK1828_ENGINE=scripted) the replies are the recorded model outputs of
// tests/server/fake/replies.txt, picked by a trigger word in the prompt,
// so the parsed calls are checked value for value. With a real engine
// (the guest's tiny story model, which does not call tools) the same
// requests must give schema-valid answers. Prints TAP.
import { REAL, ok, eq, check, done, client, require } from './lib.mjs';

const OpenAI = require('openai');
const c = client();
const weather = { type: 'function', function: { name: 'get_weather', description: 'Current weather of a city',
  parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
    required: ['location'] } } };
const time = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } };
const tools = [weather, time];
const user = (t) => [{ role: 'user', content: t }];
const base = { temperature: 0, max_tokens: REAL ? 8 : 200, tools };

// A whole answer in the chat.completion schema, with or without calls.
function validMessage(ch) {
  const m = ch.message;
  const calls = m.tool_calls || [];
  return m.role === 'assistant' && (m.content === null || typeof m.content === 'string') &&
    ['stop', 'length', 'tool_calls'].includes(ch.finish_reason) &&
    (ch.finish_reason !== 'tool_calls' || calls.length > 0) &&
    calls.every((t) => t.type === 'function' && /^call_/.test(t.id) && typeof t.function.name === 'string' &&
      typeof t.function.arguments === 'string');
}

await check('tool call, whole answer', async () => {
  const r = await c.chat.completions.create({ messages: user('WEATHER-CALL: how warm is Paris?'), ...base });
  const ch = r.choices[0];
  ok(validMessage(ch), 'tools: a whole answer is a valid assistant message', ch);
  if (REAL) return;
  const t = ch.message.tool_calls?.[0];
  ok(ch.finish_reason === 'tool_calls' && ch.message.content === 'I will check.' &&
     ch.message.tool_calls.length === 1 && t.function.name === 'get_weather' && /^call_\d+_0$/.test(t.id),
     'tools: the recorded reply gives content, one get_weather call and finish_reason tool_calls', ch);
  ok(JSON.stringify(JSON.parse(t.function.arguments)) === '{"location":"Paris","unit":"celsius"}',
     'tools: the call\'s arguments are the model\'s JSON object', t.function.arguments);
});

await check('tool calls, streamed deltas', async () => {
  const s = await c.chat.completions.create({ messages: user('TWO-CALLS: weather and time in Oslo'), ...base, stream: true });
  const calls = [];
  let content = '', finish = null, firstHasName = true, idOnce = true;
  for await (const ch of s) {
    const d = ch.choices[0]?.delta || {};
    if (d.content) content += d.content;
    for (const t of d.tool_calls || []) {
      if (!calls[t.index]) {
        calls[t.index] = { id: t.id, name: t.function?.name, args: '' };
        firstHasName &&= typeof t.id === 'string' && t.type === 'function' && typeof t.function?.name === 'string';
      } else {
        idOnce &&= t.id === undefined && t.function?.name === undefined;
      }
      calls[t.index].args += t.function?.arguments || '';
    }
    if (ch.choices[0]?.finish_reason) finish = ch.choices[0].finish_reason;
  }
  ok(['stop', 'length', 'tool_calls'].includes(finish) && firstHasName && idOnce,
     'tools stream: each call\'s first delta has index, id, type and name; later ones only argument pieces', { finish, calls });
  if (REAL) return;
  ok(finish === 'tool_calls' && content === '' && calls.length === 2 &&
     calls[0].name === 'get_weather' && calls[1].name === 'get_time' && calls[0].id !== calls[1].id,
     'tools stream: two calls at index 0 and 1, no content, finish_reason tool_calls', { finish, content, calls });
  ok(calls.length === 2 && JSON.parse(calls[0].args).location === 'Oslo' && JSON.parse(calls[1].args).zone === 'CET',
     'tools stream: the argument pieces concatenate to each call\'s JSON', calls.map((x) => x.args));
});

await check('SDK stream helper', async () => {
  const st = c.chat.completions.stream({ messages: user('WEATHER-CALL in a stream'), ...base });
  const fin = await st.finalChatCompletion();
  const ch = fin.choices[0];
  ok(validMessage(ch), 'tools: the SDK\'s stream helper assembles a valid message from the deltas', ch);
  if (!REAL)
    ok(ch.message.tool_calls?.[0]?.function?.name === 'get_weather' &&
       JSON.parse(ch.message.tool_calls[0].function.arguments).unit === 'celsius' && ch.message.content === 'I will check.',
       'tools: the SDK\'s assembled call equals the whole answer\'s', ch.message);
});

await check('forced function', async () => {
  const r = await c.chat.completions.create({ messages: user('FORCED-ARGS: Rome'), ...base,
    tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  const ch = r.choices[0];
  ok(validMessage(ch), 'tool_choice function: a valid answer', ch);
  if (!REAL)
    ok(ch.finish_reason === 'tool_calls' && ch.message.tool_calls?.length === 1 &&
       ch.message.tool_calls[0].function.name === 'get_weather' &&
       JSON.parse(ch.message.tool_calls[0].function.arguments).location === 'Rome',
       'tool_choice function: the reply continues the call the prompt opened (name from tool_choice, arguments from the model)', ch.message);
});

await check('tool result round trip', async () => {
  const msgs = [...user('WEATHER-CALL: Paris?'),
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'call_9', content: '{"temp": 21, "note": "AFTER-RESULT"}' }];
  const r = await c.chat.completions.create({ messages: msgs, ...base });
  const ch = r.choices[0];
  ok(validMessage(ch), 'tools: an assistant call and its tool result are accepted', ch);
  if (!REAL)
    ok(ch.finish_reason === 'stop' && ch.message.content === 'It is 21 °C and sunny in Paris.' && !ch.message.tool_calls,
       'tools: the answer after a tool result is content, finish_reason stop', ch);
});

if (!REAL) {
  await check('runTools agent loop', async () => {
    const seen = [];
    const runner = c.chat.completions.runTools({ model: 'm', temperature: 0, messages: user('WEATHER-CALL: and now?'),
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather.function.parameters,
        function: (a) => { seen.push(a); return 'sunny, 21 C (AFTER-RESULT)'; }, parse: JSON.parse } }] });
    const text = await runner.finalContent();
    ok(seen.length === 1 && seen[0].location === 'Paris' && text === 'It is 21 °C and sunny in Paris.',
       'runTools: the SDK calls our parsed function once, sends its result, and gets the final answer', { seen, text });
  });
  await check('parallel_tool_calls false', async () => {
    const r = await c.chat.completions.create({ messages: user('TWO-CALLS'), ...base, parallel_tool_calls: false });
    const ch = r.choices[0];
    ok(ch.finish_reason === 'tool_calls' && ch.message.tool_calls?.length === 1 && ch.message.tool_calls[0].function.name === 'get_weather',
       'parallel_tool_calls false: only the first call is returned', ch.message);
    const st = c.chat.completions.stream({ messages: user('TWO-CALLS'), ...base, parallel_tool_calls: false });
    const fin = (await st.finalChatCompletion()).choices[0];
    ok(fin.message.tool_calls?.length === 1 && fin.finish_reason === 'tool_calls' && fin.message.content === null,
       'parallel_tool_calls false, streamed: one call; content null as in the whole answer', fin.message);
  });
  await check('call cut off', async () => {
    const r = await c.chat.completions.create({ messages: user('WEATHER-CALL'), ...base, stop: ['Paris'] });
    const ch = r.choices[0];
    ok(ch.finish_reason === 'stop' && ch.message.tool_calls?.[0]?.function.arguments.startsWith('{"location": "') && !ch.message.tool_calls[0].function.arguments.includes('Paris'),
       'tools: a stop string inside a call\'s arguments ends "stop", not "tool_calls" (the arguments as far as they came)', ch);
    const l = await c.chat.completions.create({ messages: user('WEATHER-CALL'), ...base, max_tokens: 14 });
    eq(l.choices[0].finish_reason, 'length', 'tools: the token limit inside a call ends "length"');
  });
  await check('tag text', async () => {
    const a = await c.chat.completions.create({ messages: user('TAG-TEXT'), temperature: 0, max_tokens: 50 });
    const b = await c.chat.completions.create({ messages: user('TAG-TEXT'), ...base });
    const n = await c.chat.completions.create({ messages: user('WEATHER-CALL'), ...base, tool_choice: 'none' });
    eq(a.choices[0].message.content, 'Write <tool_call> to call a tool.', 'no tools: <tool_call> in a reply is content');
    ok(b.choices[0].message.content === 'Write <tool_call> to call a tool.' && !b.choices[0].message.tool_calls &&
       b.choices[0].finish_reason === 'stop', 'tools: a <tool_call> tag that is not a call stays content', b.choices[0]);
    ok(n.choices[0].message.content.includes('<tool_call>') && !n.choices[0].message.tool_calls,
       'tool_choice none: no tools offered, the reply is not parsed for calls', n.choices[0].message);
  });
}

// ---- validation ----------------------------------------------------------
const bad = [
  ['tools not an array', { tools: { type: 'function' } }, 'tools'],
  ['a tool of type retrieval', { tools: [{ type: 'retrieval' }] }, 'tools[0].type'],
  ['a web_search tool', { tools: [weather, { type: 'web_search' }] }, 'tools[1].type'],
  ['a function without a name', { tools: [{ type: 'function', function: { parameters: {} } }] }, 'tools[0].function.name'],
  ['a name with a space', { tools: [{ type: 'function', function: { name: 'get weather' } }] }, 'tools[0].function.name'],
  ['parameters a string', { tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] }, 'tools[0].function.parameters'],
  ['two tools with one name', { tools: [weather, weather] }, 'tools[1].function.name'],
  ['129 tools', { tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: 'f' + i } })) }, 'tools'],
  ['tool_choice of type "x"', { tools, tool_choice: { type: 'x', function: { name: 'get_weather' } } }, 'tool_choice'],
  ['tool_choice naming no tool', { tools, tool_choice: { type: 'function', function: { name: 'nope' } } }, 'tool_choice'],
  ['tool_choice required without tools', { tool_choice: 'required' }, 'tool_choice'],
  ['tool_choice "always"', { tools, tool_choice: 'always' }, 'tool_choice'],
  ['parallel_tool_calls "yes"', { tools, parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
  ['deprecated functions', { functions: [{ name: 'f' }] }, 'functions'],
  ['tool_calls not an array', { messages: [...user('x'), { role: 'assistant', tool_calls: {} }] }, 'messages[1].tool_calls'],
  ['a call without a name', { messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: {} }] }] }, 'messages[1].tool_calls[0]'],
  ['arguments a number', { messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: 5 } }] }] }, 'messages[1].tool_calls[0]'],
  ['a tool result before any call', { messages: [...user('x'), { role: 'tool', tool_call_id: 'a', content: 'r' }] }, 'messages'],
  ['a tool_call_id that names no call', { messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'b', content: 'r' }] }, 'messages[2].tool_call_id'],
  ['a call answered twice', { messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'a', content: 'r' }, { role: 'tool', tool_call_id: 'a', content: 'r' }] }, 'messages[3].tool_call_id'],
  ['129 calls in one message', { messages: [...user('x'), { role: 'assistant', tool_calls: Array.from({ length: 129 }, (_, i) => ({ id: 'c' + i, type: 'function', function: { name: 'f', arguments: '{}' } })) }] }, 'messages[1].tool_calls'],
  ['tool_call_id a number', { messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 7, content: 'r' }] }, 'messages[2].tool_call_id'],
];
for (const [name, extra, param] of bad) {
  await check(name, async () => {
    try {
      await c.chat.completions.create({ messages: user('hi'), max_tokens: 2, ...extra });
      ok(false, `400 ${name}`, 'no error');
    } catch (e) {
      ok(e instanceof OpenAI.BadRequestError && e.param === param && e.error?.type === 'invalid_request_error' &&
         typeof e.message === 'string', `400 ${name} (param ${param})`, `${e.constructor.name} ${e.status} param ${e.param}: ${e.message}`);
    }
  });
}
done();
