// SPDX-License-Identifier: MIT
// Function calling on /v1/responses through the official openai SDK, as
// coding agents (Codex CLI) use it: flat function tools and tool_choice
// in; reasoning, message and function_call output items out (whole, and
// streamed as the events the SDK's responses.stream() helper assembles);
// function_call and function_call_output items sent back in "input"; the
// validation of every tool field and input item. With the scripted engine
// (RK1828_ENGINE=scripted) the replies are the recorded model outputs of
// tests/server/fake/replies.txt (picked by a trigger word in the prompt),
// so items are checked value for value, and RK1828_THINK_URL is a second
// scripted server whose template reasons (<think>). With a real engine
// (the guest's tiny story model, which does not call tools) the answers
// must be schema-valid. Prints TAP.
import { REAL, ok, eq, check, done, client, require } from './lib.mjs';

const OpenAI = require('openai');
const c = client();
const weatherParams = { type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['location'] };
const weather = { type: 'function', name: 'get_weather', description: 'Current weather of a city', parameters: weatherParams, strict: false };
const time = { type: 'function', name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };
const tools = [weather, time];
const base = { temperature: 0, max_output_tokens: REAL ? 8 : 200, tools };
const user = (t) => [{ role: 'user', content: t }];

// A Response in the SDK's schema: ids, status, and each output item's shape.
function valid(r) {
  const items = r.output || [];
  return /^resp_/.test(r.id) && r.object === 'response' && ['completed', 'incomplete'].includes(r.status) &&
    (r.status !== 'incomplete' || r.incomplete_details?.reason === 'max_output_tokens') &&
    typeof r.output_text === 'string' && Array.isArray(r.tools) && typeof r.parallel_tool_calls === 'boolean' &&
    r.usage?.input_tokens > 0 && r.usage.total_tokens === r.usage.input_tokens + r.usage.output_tokens &&
    items.length > 0 && items.every((it) =>
      (it.type === 'message' && /^msg_/.test(it.id) && it.role === 'assistant' && it.content.every((p) => p.type === 'output_text' && typeof p.text === 'string')) ||
      (it.type === 'reasoning' && /^rs_/.test(it.id) && Array.isArray(it.summary) && it.content.every((p) => p.type === 'reasoning_text')) ||
      (it.type === 'function_call' && /^fc_/.test(it.id) && /^call_/.test(it.call_id) && typeof it.name === 'string' &&
       typeof it.arguments === 'string' && ['completed', 'incomplete'].includes(it.status)));
}
// Items without their ids and the SDK helpers' parsed fields, to compare two answers.
const norm = (items) => JSON.parse(JSON.stringify(items, (k, v) => (['id', 'call_id', 'parsed', 'parsed_arguments'].includes(k) ? undefined : v)));
const calls = (r) => r.output.filter((it) => it.type === 'function_call');
const types = (r) => r.output.map((it) => it.type).join(',');

await check('function call, whole answer', async () => {
  const r = await c.responses.create({ input: 'WEATHER-CALL: how warm is Paris?', ...base });
  ok(valid(r), 'responses tools: a whole answer is a valid Response', r);
  ok(r.tools.length === 2 && r.tools[0].type === 'function' && r.tools[0].name === 'get_weather' &&
     r.tools[0].parameters.required[0] === 'location' && r.tool_choice === 'auto' && r.parallel_tool_calls === true,
     'responses tools: the response echoes tools (flat), tool_choice auto and parallel_tool_calls true', r);
  if (REAL) return;
  const f = calls(r)[0];
  ok(r.status === 'completed' && types(r) === 'message,function_call' && r.output_text === 'I will check.' &&
     f.name === 'get_weather' && f.status === 'completed' && /^call_\d+_0$/.test(f.call_id) && f.id === 'fc_' + f.call_id.slice(5),
     'responses tools: the recorded reply is a message "I will check." then one completed get_weather call', r.output);
  eq(JSON.parse(f.arguments), { location: 'Paris', unit: 'celsius' }, 'responses tools: the call\'s arguments are the model\'s JSON object');
});

// Events of a raw stream (the SDK's async iterator over create({stream: true})).
async function events(body) {
  const evs = [];
  for await (const e of await c.responses.create({ ...body, stream: true })) evs.push(e);
  return evs;
}

await check('function calls, streamed events', async () => {
  const evs = await events({ input: 'TWO-CALLS: weather and time in Oslo', ...base });
  const seqOk = evs.every((e, i) => e.sequence_number === i);
  const added = evs.filter((e) => e.type === 'response.output_item.added');
  const fin = evs[evs.length - 1];
  ok(seqOk && evs[0].type === 'response.created' && evs[1].type === 'response.in_progress' &&
     ['response.completed', 'response.incomplete'].includes(fin.type) && valid({ ...fin.response, output_text: '' }),
     'responses stream: created, in_progress ... completed, sequence_number 0, 1, 2, ...', evs.map((e) => e.type));
  // Per item: added, its deltas, its .done events, output_item.done, before the next item.
  let open = null, at = -1, orderOk = added.length > 0;
  const args = {};
  for (const e of evs.slice(2, -1)) {
    if (e.type === 'response.output_item.added') {
      orderOk &&= open === null && e.output_index === at + 1 && (e.item.type !== 'function_call' || e.item.arguments === '');
      open = e.item;
      at = e.output_index;
    } else if (e.type === 'response.output_item.done') {
      orderOk &&= open && e.item.id === open.id && e.output_index === at;
      open = null;
    } else {
      orderOk &&= open && e.item_id === open.id && e.output_index === at;
      if (e.type === 'response.function_call_arguments.delta') args[e.item_id] = (args[e.item_id] || '') + e.delta;
      if (e.type === 'response.function_call_arguments.done') orderOk &&= e.arguments === args[e.item_id];
    }
  }
  ok(orderOk && open === null, 'responses stream: each item is added (a call with empty arguments), gets its deltas and .done, and is done before the next', evs.map((e) => e.type));
  if (REAL) return;
  const out = fin.response.output;
  ok(fin.type === 'response.completed' && out.length === 2 && out[0].name === 'get_weather' && out[1].name === 'get_time' &&
     out[0].call_id !== out[1].call_id && out.every((f) => f.status === 'completed' && args[f.id] === f.arguments),
     'responses stream: two function_call items whose argument deltas concatenate to their arguments', out);
  eq(out.map((f) => JSON.parse(f.arguments)), [{ location: 'Oslo' }, { zone: 'CET' }], 'responses stream: the two calls\' arguments');
});

await check('SDK stream helper', async () => {
  const st = c.responses.stream({ input: 'WEATHER-CALL in a stream', ...base });
  const seen = [];
  st.on('response.function_call_arguments.delta', (e) => seen.push(e.delta));
  const r = await st.finalResponse();
  ok(valid(r), 'responses.stream(): finalResponse() is a valid Response', r);
  if (REAL) return;
  const whole = await c.responses.create({ input: 'WEATHER-CALL in a stream', ...base });
  ok(r.output_text === 'I will check.' && types(r) === 'message,function_call' && seen.join('') === calls(r)[0].arguments,
     'responses.stream(): output_text and the function_call item assembled by the SDK', r.output);
  eq(norm(r.output), norm(whole.output),
     'responses.stream(): the streamed items equal the whole answer\'s (but for their ids)');
});

await check('round trip', async () => {
  const first = await c.responses.create({ input: user('WEATHER-CALL: Paris?'), ...base });
  const f = calls(first)[0];
  // The agent loop: the response's items go back as they came, with the call's output.
  const input = [...user('WEATHER-CALL: Paris?'), ...first.output,
    ...(f ? [{ type: 'function_call_output', call_id: f.call_id, output: '{"temp": 21, "note": "AFTER-RESULT"}' }] : [])];
  const r = await c.responses.create({ input, ...base });
  ok(valid(r), 'responses round trip: the previous output items and a function_call_output are accepted', r);
  if (REAL) return;
  ok(r.status === 'completed' && types(r) === 'message' && r.output_text === 'It is 21 °C and sunny in Paris.',
     'responses round trip: after the call\'s output the answer is a message', r.output);
  // The same conversation through chat completions renders the same prompt.
  const chat = await c.chat.completions.create({ temperature: 0, max_tokens: 200,
    tools: tools.map(({ type, ...fn }) => ({ type, function: fn })),
    messages: [...user('WEATHER-CALL: Paris?'),
      { role: 'assistant', content: 'I will check.', tool_calls: [{ id: f.call_id, type: 'function', function: { name: f.name, arguments: f.arguments } }] },
      { role: 'tool', tool_call_id: f.call_id, content: '{"temp": 21, "note": "AFTER-RESULT"}' }] });
  eq(r.usage.input_tokens, chat.usage.prompt_tokens,
     'responses round trip: message + function_call items render as chat\'s assistant tool_calls message (same prompt tokens)');
  const two = await c.responses.create({ ...base, input: [...user('TWO-CALLS'),
    { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"location":"Oslo"}' },
    { type: 'function_call', call_id: 'call_b', name: 'get_time', arguments: '{"zone":"CET"}' },
    { type: 'function_call_output', call_id: 'call_b', output: 'CET 12:00' },
    { type: 'function_call_output', call_id: 'call_a', output: [{ type: 'input_text', text: 'AFTER-RESULT' }] }] });
  const twoChat = await c.chat.completions.create({ temperature: 0, max_tokens: 200,
    tools: tools.map(({ type, ...fn }) => ({ type, function: fn })),
    messages: [...user('TWO-CALLS'), { role: 'assistant', content: '', tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"zone":"CET"}' } }] },
    { role: 'tool', tool_call_id: 'call_b', content: 'CET 12:00' }, { role: 'tool', tool_call_id: 'call_a', content: 'AFTER-RESULT' }] });
  ok(two.output_text === 'It is 21 °C and sunny in Paris.' && two.usage.input_tokens === twoChat.usage.prompt_tokens,
     'responses round trip: two consecutive function_call items are one assistant turn with two calls (as chat, same prompt tokens)',
     { responses: two.usage, chat: twoChat.usage });
});

await check('tool_choice', async () => {
  const named = await c.responses.create({ input: 'FORCED-ARGS: Rome', ...base, tool_choice: { type: 'function', name: 'get_weather' } });
  ok(valid(named) && named.tool_choice?.type === 'function' && named.tool_choice.name === 'get_weather',
     'tool_choice function: a valid answer echoing the choice', named);
  const req = await c.responses.create({ input: 'REQUIRED-ARGS', ...base, tool_choice: 'required' });
  ok(valid(req) && req.tool_choice === 'required', 'tool_choice required: a valid answer', req);
  if (REAL) return;
  ok(types(named) === 'function_call' && calls(named)[0].name === 'get_weather' && JSON.parse(calls(named)[0].arguments).location === 'Rome',
     'tool_choice function: the call the prompt opened (name from tool_choice, arguments from the model)', named.output);
  ok(types(req) === 'function_call' && calls(req)[0].name === 'get_time' && JSON.parse(calls(req)[0].arguments).zone === 'UTC',
     'tool_choice required: the reply continues the <tool_call> the prompt opened', req.output);
  const none = await c.responses.create({ input: 'WEATHER-CALL', ...base, tool_choice: 'none' });
  ok(types(none) === 'message' && none.output_text.includes('<tool_call>') && none.tool_choice === 'none',
     'tool_choice none: no tools offered, the reply is a message (not parsed for calls)', none.output);
});

if (!REAL) {
  await check('parallel_tool_calls false', async () => {
    const r = await c.responses.create({ input: 'TWO-CALLS', ...base, parallel_tool_calls: false });
    ok(types(r) === 'function_call' && calls(r)[0].name === 'get_weather' && r.parallel_tool_calls === false,
       'parallel_tool_calls false: only the first call is returned', r.output);
    const s = await c.responses.stream({ input: 'TWO-CALLS', ...base, parallel_tool_calls: false }).finalResponse();
    ok(types(s) === 'function_call' && calls(s)[0].name === 'get_weather', 'parallel_tool_calls false, streamed: one call', s.output);
  });
  await check('call cut off', async () => {
    const l = await c.responses.create({ input: 'WEATHER-CALL', ...base, max_output_tokens: 14 });
    ok(l.status === 'incomplete' && l.incomplete_details?.reason === 'max_output_tokens' && calls(l)[0]?.status === 'incomplete',
       'the token limit inside a call: response incomplete (max_output_tokens), the call incomplete', l);
    const s = await c.responses.stream({ input: 'WEATHER-CALL', ...base, max_output_tokens: 14 }).finalResponse();
    ok(s.status === 'incomplete' && calls(s)[0]?.status === 'incomplete' && calls(s)[0].arguments === calls(l)[0].arguments,
       'the same cut streamed: response.incomplete, the call incomplete with the same arguments', s);
    const t = await c.responses.create({ input: 'WEATHER-CALL', ...base, stop: ['Paris'] });
    ok(t.status === 'completed' && calls(t)[0]?.status === 'incomplete' && !calls(t)[0].arguments.includes('Paris'),
       'a stop string inside a call: the call incomplete, its arguments as far as they came', t.output);
  });
  await check('no tools', async () => {
    const r = await c.responses.create({ input: 'TAG-TEXT', temperature: 0, max_output_tokens: 50 });
    ok(types(r) === 'message' && r.output_text === 'Write <tool_call> to call a tool.' && r.tools.length === 0 && r.tool_choice === 'auto',
       'no tools: one message item, tools [] echoed', r);
  });
  if (process.env.RK1828_THINK_URL) {
    const t = new OpenAI.OpenAI({ apiKey: 'none', baseURL: process.env.RK1828_THINK_URL + '/v1', maxRetries: 0 });
    await check('reasoning', async () => {
      const r = await t.responses.create({ input: 'THINK-CALL', ...base });
      ok(types(r) === 'reasoning,message,function_call' && r.output[0].content[0].text === 'Paris: the weather tool.' &&
         r.output[0].summary.length === 0 && r.output_text === 'I will check.' && calls(r)[0].status === 'completed',
         'reasoning: a reasoning item (reasoning_text), then the message, then the call', r.output);
      const s = await t.responses.stream({ input: 'THINK-CALL', ...base }).finalResponse();
      eq(norm(s.output), norm(r.output),
         'reasoning streamed (reasoning_text deltas): the SDK assembles the same items');
      const f = calls(r)[0];
      const back = await t.responses.create({ ...base, input: [...user('THINK-CALL'), ...r.output,
        { type: 'function_call_output', call_id: f.call_id, output: 'AFTER-RESULT' }] });
      ok(valid(back) && back.output_text === 'It is 21 °C and sunny in Paris.', 'reasoning: the reasoning item passed back is accepted', back);
    });
    // The scripted engine gives 4 bytes a token: the tokens of the think
    // block (tags included) are those up to the one that ends "</think>".
    const thinkEnd = '<think>\nParis: the weather tool.\n</think>'.length, rsTokens = Math.ceil(thinkEnd / 4);
    await check('reasoning tokens and summary', async () => {
      const r = await t.responses.create({ input: 'THINK-CALL', ...base });
      ok(r.usage.output_tokens_details?.reasoning_tokens === rsTokens && r.usage.output_tokens > rsTokens,
         `usage.output_tokens_details.reasoning_tokens counts the ${rsTokens} tokens of the <think> block`, r.usage);
      ok(r.output[0].summary.length === 0, 'no reasoning.summary asked: the summary stays []', r.output[0]);
      const rs = { ...base, reasoning: { effort: 'medium', summary: 'auto' } };
      const w = await t.responses.create({ input: 'THINK-CALL', ...rs });
      eq(w.output[0].summary, [{ type: 'summary_text', text: 'Paris: the weather tool.' }],
         'reasoning.summary auto: the reasoning item\'s summary is one summary_text part with the reasoning');
      eq(w.output[0].content, r.output[0].content, 'reasoning.summary auto: the reasoning_text content is kept');
      const evs = [];
      for await (const e of await t.responses.create({ input: 'THINK-CALL', ...rs, stream: true })) evs.push(e);
      const of = (ty) => evs.filter((e) => e.type === ty);
      const added = of('response.reasoning_summary_part.added'), deltas = of('response.reasoning_summary_text.delta');
      const tdone = of('response.reasoning_summary_text.done'), pdone = of('response.reasoning_summary_part.done');
      const itemAdded = evs.findIndex((e) => e.type === 'response.output_item.added');
      const itemDone = evs.findIndex((e) => e.type === 'response.output_item.done');
      ok(added.length === 1 && added[0].summary_index === 0 && added[0].part.type === 'summary_text' && added[0].part.text === '' &&
         added[0].item_id === evs[itemAdded].item.id && evs[itemAdded].item.type === 'reasoning' && deltas.length > 1 &&
         deltas.map((d) => d.delta).join('') === 'Paris: the weather tool.' && tdone.length === 1 &&
         tdone[0].text === 'Paris: the weather tool.' && pdone.length === 1 && pdone[0].part.text === 'Paris: the weather tool.' &&
         evs.indexOf(added[0]) > itemAdded && evs.indexOf(pdone[0]) < itemDone,
         'streamed: reasoning_summary_part.added, _text.delta pieces (joined: the reasoning), _text.done, _part.done inside the item',
         evs.filter((e) => /summary/.test(e.type)));
      const fin = evs[evs.length - 1].response;
      ok(fin.usage.output_tokens_details.reasoning_tokens === rsTokens, 'streamed: response.completed\'s usage has the reasoning tokens', fin.usage);
      const sw = await t.responses.stream({ input: 'THINK-CALL', ...rs }).finalResponse();
      eq(norm(sw.output), norm(w.output), 'streamed with a summary: the SDK assembles the same items (summary included)');
      const bad = await t.responses.create({ input: 'x', reasoning: { summary: 'verbose' } }).catch((e) => e);
      ok(bad instanceof OpenAI.BadRequestError && bad.param === 'reasoning.summary', '400 reasoning.summary "verbose" names reasoning.summary', bad.message);
      const cc = await t.chat.completions.create({ messages: user('THINK-CALL'), tools: [{ type: 'function', function: { name: 'get_weather',
        parameters: weatherParams } }], temperature: 0, max_tokens: 200 });
      ok(cc.usage.completion_tokens_details?.reasoning_tokens === rsTokens && cc.choices[0].message.reasoning_content === 'Paris: the weather tool.',
         'chat completions: usage.completion_tokens_details.reasoning_tokens counts the think block too', cc.usage);
      const plain = await c.chat.completions.create({ messages: user('WEATHER-CALL'), tools: [{ type: 'function', function: { name: 'get_weather',
        parameters: weatherParams } }], temperature: 0, max_tokens: 200 });
      ok(plain.usage.completion_tokens_details?.reasoning_tokens === 0, 'a reply without <think>: reasoning_tokens 0', plain.usage);
    });
  }
}

// A request shaped as Codex CLI sends it (its fields we ignore included),
// then its next turn with the shell call's output.
await check('Codex-shaped turns', async () => {
  const shell = { type: 'function', name: 'shell', description: 'Runs a shell command and returns its output.', strict: false,
    parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' },
      timeout_ms: { type: 'number' } }, required: ['command'], additionalProperties: false } };
  const msg = (role, text) => ({ type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] });
  const req = { instructions: 'You are a coding agent.', tools: [shell], tool_choice: 'auto', parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' }, store: false, include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1', temperature: 0, max_output_tokens: REAL ? 8 : 200 };
  const input = [msg('developer', 'Sandbox: workspace-write.'), msg('user', '<environment_context>cwd /tmp</environment_context>'),
    msg('user', 'SHELL-CALL: list the files')];
  const r = await c.responses.stream({ ...req, input }).finalResponse();
  ok(valid(r), 'Codex-shaped request: a valid Response (reasoning, store, include, prompt_cache_key accepted)', r);
  if (REAL) return;
  const f = calls(r)[0];
  ok(types(r) === 'function_call' && f.name === 'shell' && JSON.parse(f.arguments).command[0] === 'ls',
     'Codex-shaped request: one shell function_call', r.output);
  const next = await c.responses.stream({ ...req, input: [...input, ...r.output,
    { type: 'function_call_output', call_id: f.call_id, output: JSON.stringify({ output: 'a\nb\n', metadata: { exit_code: 0 } }) + ' SHELL-RESULT' }] }).finalResponse();
  ok(types(next) === 'message' && next.output_text === 'There are two files: a and b.',
     'Codex-shaped request: the turn after the call\'s output is the answer', next.output);
});

// Codex CLI 0.169's tools: functions, a namespace of agent tools (it sends
// each MCP server so too) and a hosted web_search. The namespace's members
// are offered to the model under their own names, a call to one comes
// back with its namespace (whole and streamed) and is accepted in the
// next turn's input; web_search is a declaration only.
await check('Codex namespace and hosted tools', async () => {
  const fn = (name, props = {}) => ({ type: 'function', name, description: name, strict: false,
    parameters: { type: 'object', properties: props, additionalProperties: false } });
  const ctools = [fn('exec_command', { cmd: { type: 'string' } }),
    { type: 'namespace', name: 'multi_agent_v1', description: 'Tools for spawning and managing sub-agents.',
      tools: [fn('spawn_agent', { message: { type: 'string' } }), fn('wait_agent', { ids: { type: 'array', items: { type: 'string' } } })] },
    fn('get_goal'), { type: 'web_search', external_web_access: false }];
  const req = { tools: ctools, tool_choice: 'auto', parallel_tool_calls: true, reasoning: { summary: 'auto' }, store: false,
    temperature: 0, max_output_tokens: REAL ? 8 : 200 };
  const input = user('NS-CALL: ask a sub-agent to count the files');
  const r = await c.responses.create({ ...req, input });
  ok(valid(r), 'Codex tools (namespace, web_search): 200 and a valid Response', r);
  eq(r.tools, ctools, 'Codex tools: the response echoes the tools as sent (namespace and web_search included)');
  if (REAL) return;
  const f = calls(r)[0];
  ok(types(r) === 'function_call' && f.namespace === 'multi_agent_v1' && f.name === 'spawn_agent' && f.status === 'completed' &&
     JSON.parse(f.arguments).message === 'count the files',
     'a call to a namespace member is a function_call with its namespace and the member\'s name', r.output);
  const evs = await events({ ...req, input });
  const added = evs.find((e) => e.type === 'response.output_item.added'), doneEv = evs.find((e) => e.type === 'response.output_item.done');
  ok(added?.item.namespace === 'multi_agent_v1' && doneEv?.item.namespace === 'multi_agent_v1' && doneEv.item.name === 'spawn_agent',
     'streamed: output_item.added and .done of the call carry the namespace', [added, doneEv]);
  const s = await c.responses.stream({ ...req, input }).finalResponse();
  eq(norm(s.output), norm(r.output), 'streamed: the SDK assembles the same function_call (namespace included)');
  const next = await c.responses.create({ ...req, input: [...input, ...r.output,
    { type: 'function_call_output', call_id: f.call_id, output: 'AFTER-RESULT' }] });
  ok(types(next) === 'message' && next.output_text === 'It is 21 °C and sunny in Paris.',
     'the next turn takes the function_call back with its namespace', next.output);
});

// ---- validation ----------------------------------------------------------
const fc = (id, name = 'get_weather') => ({ type: 'function_call', call_id: id, name, arguments: '{}' });
const bad = [
  ['a namespace without its tools', { tools: [{ type: 'namespace', name: 'n', description: 'd' }] }, 'tools[0].tools'],
  ['a namespace member named as a function', { tools: [weather, { type: 'namespace', name: 'n', tools: [weather] }] }, 'tools[1].tools[0].name'],
  ['a namespace in a namespace', { tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'namespace', name: 'm', tools: [] }] }] }, 'tools[0].tools[0].type'],
  ['tool_choice of a declared web_search tool', { tools: [weather, { type: 'web_search' }], tool_choice: { type: 'web_search' } }, 'tool_choice'],
  ['a tool of type "funktion"', { tools: [{ type: 'funktion', name: 'f' }] }, 'tools[0].type'],
  ['a chat-shaped (nested) tool', { tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools[0].name'],
  ['a name with a space', { tools: [{ type: 'function', name: 'get weather' }] }, 'tools[0].name'],
  ['parameters a string', { tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
  ['strict a string', { tools: [{ type: 'function', name: 'f', strict: 'yes' }] }, 'tools[0].strict'],
  ['two tools with one name', { tools: [weather, time, weather] }, 'tools[2].name'],
  ['129 tools', { tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', name: 'f' + i })) }, 'tools'],
  ['tool_choice naming no tool', { tools, tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice'],
  ['tool_choice in the chat shape', { tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } }, 'tool_choice'],
  ['tool_choice of a hosted tool', { tools, tool_choice: { type: 'file_search' } }, 'tool_choice'],
  ['tool_choice required without tools', { tool_choice: 'required' }, 'tool_choice'],
  ['parallel_tool_calls "yes"', { tools, parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
  ['a call_id that names no call', { input: [...user('x'), fc('call_a'), { type: 'function_call_output', call_id: 'call_b', output: 'r' }] }, 'input[2].call_id'],
  ['an output before any call', { input: [...user('x'), { type: 'function_call_output', call_id: 'call_a', output: 'r' }] }, 'input[1].call_id'],
  ['a call answered twice', { input: [...user('x'), fc('call_a'), { type: 'function_call_output', call_id: 'call_a', output: 'r' },
    { type: 'function_call_output', call_id: 'call_a', output: 'r' }] }, 'input[3].call_id'],
  ['a function_call without call_id', { input: [...user('x'), { type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[1].call_id'],
  ['arguments an object', { input: [...user('x'), { type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }, 'input[1].arguments'],
  ['an output without output', { input: [...user('x'), fc('c'), { type: 'function_call_output', call_id: 'c' }] }, 'input[2].output'],
  ['an input_image part in an output', { input: [...user('x'), fc('c'), { type: 'function_call_output', call_id: 'c', output: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[2].output'],
  ['129 calls in one turn', { input: [...user('x'), ...Array.from({ length: 129 }, (_, i) => fc('c' + i))] }, 'input[129]'],
  ['a web_search_call item', { input: [...user('x'), { type: 'web_search_call', id: 'ws_1', status: 'completed' }] }, 'input[1].type'],
  ['an item_reference to an item not stored', { input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].id'],
  ['a tool role message', { input: [{ role: 'tool', content: 'x' }] }, 'input[0].role'],
];
for (const [name, extra, param] of bad) {
  await check(name, async () => {
    try {
      await c.responses.create({ input: 'hi', max_output_tokens: 2, ...extra });
      ok(false, `400 ${name}`, 'no error');
    } catch (e) {
      ok(e instanceof OpenAI.BadRequestError && e.param === param && e.error?.type === 'invalid_request_error' &&
         typeof e.message === 'string', `400 ${name} (param ${param})`, `${e.constructor.name} ${e.status} param ${e.param}: ${e.message}`);
    }
  });
}
done();
