// SPDX-License-Identifier: MIT
// Fuzzed bodies: a few hundred malformed or mistyped requests (truncated
// JSON, deep nesting, huge numbers, invalid UTF-8, wrong types, a 100 MB
// streamed body) must each get a 4xx in the OpenAI envelope, and the
// server must stay up. RK1828_FUZZ_BIG_MB sets the size of the streamed
// body (default 100; the guest run, where QEMU's user network carries a
// few MB/s, sends 16, still twice the limit). Then raw requests whose
// framing cannot be trusted (RFC 9112: a Transfer-Encoding other than a
// final chunked, two Content-Length values, whitespace before a colon)
// must each be answered at once in the envelope and closed, and with
// RK1828_FUZZ_CUT=1 (the host run) a chunked body that never ends must be
// cut at 256 MiB. Prints TAP.
import net from 'node:net';
import { ok, done, raw, check, BASE, KEY } from './lib.mjs';

// Both token limits: a mutation that breaks one key still leaves a short
// request (the guest's real engine would otherwise fill the context).
const good = JSON.stringify({ messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 2, max_completion_tokens: 2, temperature: 0, stop: ['x'] });
const bodies = [];
for (let i = 0; i < good.length; i++) bodies.push(['truncated at ' + i, good.slice(0, i)]);
bodies.push(['deep arrays', '['.repeat(100000)]);
bodies.push(['deep objects', '{"a":'.repeat(50000)]);
bodies.push(['deep messages', JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }).replace('"x"', '['.repeat(3000) + ']'.repeat(3000))]);
bodies.push(['huge exponent', '{"messages":[{"role":"user","content":"x"}],"temperature":1e999}']);
bodies.push(['huge integer', '{"messages":[{"role":"user","content":"x"}],"max_tokens":123456789012345678901234567890}']);
bodies.push(['max_tokens 1e12', '{"messages":[{"role":"user","content":"x"}],"max_tokens":1e12}']);
bodies.push(['seed 2^70', '{"messages":[{"role":"user","content":"x"}],"seed":1180591620717411303424}']);
bodies.push(['NaN', '{"messages":[{"role":"user","content":"x"}],"temperature":NaN}']);
bodies.push(['empty', '']);
bodies.push(['null', 'null']);
bodies.push(['array', '[]']);
bodies.push(['string', '"hello"']);
bodies.push(['number', '42']);
bodies.push(['duplicate key', '{"messages":[],"messages":[]}']);
bodies.push(['NUL escape', '{"messages":[{"role":"user","content":"a\\u0000b"}]}']);
bodies.push(['lone surrogate', '{"messages":[{"role":"user","content":"\\ud800"}]}']);
for (const b of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0xe2, 0x82]]) {
  bodies.push(['invalid UTF-8 ' + b.map((x) => x.toString(16)).join(' '),
    Buffer.concat([Buffer.from('{"messages":[{"role":"user","content":"a'), Buffer.from(b), Buffer.from('"}]}')])]);
}
const m = [{ role: 'user', content: 'x' }];
const typed = {
  messages: [{}, 'x', 1, true, [], [1], ['x'], [{ role: 1, content: 'x' }], [{ role: 'user', content: 5 }],
    [{ role: 'user', content: [{ type: 'text', text: 5 }] }], [{ role: 'user', content: [{ text: 'x' }] }],
    [{ role: 'user', content: [1] }], [{ role: 'tool', content: 'x' }], [{ content: 'x' }]],
  stream: ['false', 1, 0, [], {}],
  stream_options: ['x', 1, [], { include_usage: 'yes' }],
  max_tokens: [-1, -1e9, 1.5, 'x', true, [], {}, 2 ** 31],
  max_completion_tokens: [-1, 'x', 0.5],
  temperature: ['hot', -0.1, 2.01, true, [], {}, -1e300],
  top_p: [0, -1, 1.01, 'x', false],
  top_k: [-2, 'x', 1.5],
  seed: ['x', 1.5, true],
  stop: [1, [1], ['a', 'b', 'c', 'd', 'e'], {}, [null]],
  n: [0, 2, 'x', -1],
  logprobs: ['x', 1],
  top_logprobs: [-1, 21, 'x'],
  response_format: ['text', 1, {}, { type: 'sound' }, { type: 'json_schema' }, { type: 'json_object', schema: 1 }, { type: 1 }],
  tools: [[{ type: 'function' }], [{ type: 'function', function: { name: 'a b' } }], [{ function: { name: 'f' } }], 'x', [1]],
  tool_choice: ['always', 1, { type: 'function' }, 'required', { type: 'function', function: { name: 'f' } }],
};
for (const [k, vals] of Object.entries(typed))
  for (const v of vals)
    bodies.push([`chat ${k}=${JSON.stringify(v)}`, JSON.stringify(k === 'messages' ? { messages: v } : { messages: m, [k]: v })]);
for (const v of [1, null, [], [1, 2], ['a', 'b'], {}, true])
  bodies.push([`completions prompt=${JSON.stringify(v)}`, JSON.stringify({ prompt: v }), '/v1/completions']);
for (const v of [1, [], [{}], [{ role: 'user', content: [{ type: 'input_image' }] }], [{ type: 'function_call' }]])
  bodies.push([`responses input=${JSON.stringify(v)}`, JSON.stringify({ input: v }), '/v1/responses']);
// Function calling on /v1/responses: each mistyped tool field or input item is a 400.
const rin = [{ role: 'user', content: 'x' }, { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }];
const rtyped = {
  input: [[{ type: 'function_call', call_id: 1, name: 'f', arguments: '{}' }], [{ type: 'function_call', call_id: 'c', name: 'f', arguments: 5 }],
    [{ type: 'function_call', call_id: 'c', arguments: '{}' }], [...rin, { type: 'function_call_output', call_id: 'c1', output: 1 }],
    [...rin, { type: 'function_call_output', output: 'x' }], [...rin, { type: 'function_call_output', call_id: 'c2', output: 'x' }],
    [{ type: 'function_call_output', call_id: 'c1', output: 'x' }], [{ type: 'reasoning', summary: 'x' }, ...rin],
    [{ type: 'reasoning', content: [{ text: 1 }] }, ...rin], [{ type: 'reasoning', summary: [] }], [{ type: 'item_reference', id: 'x' }],
    [{ type: 1 }], [{ type: 'computer_call_output', call_id: 'c1' }], [{ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }]],
  tools: [[{ type: 'namespace', name: 'n' }], [{ type: 'namespace', name: 'n', tools: [{ type: 'function' }] }], [{ type: 'function' }], [{ type: 'function', function: { name: 'f' } }], [{ type: 'function', name: 'f', strict: 1 }],
    [{ type: 'function', name: 'f' }, { type: 'function', name: 'f' }], [{ name: 'f' }], [{ type: 'function', name: 'f', parameters: [] }]],
  tool_choice: [{ type: 'function' }, { type: 'mcp', server_label: 'x' }, 'any', { type: 'function', name: 'nope' }, { type: 'allowed_tools', mode: 'auto', tools: [] }],
};
for (const [k, vals] of Object.entries(rtyped))
  for (const v of vals)
    bodies.push([`responses ${k}=${JSON.stringify(v)}`, JSON.stringify({ input: k === 'input' ? v : 'x', max_output_tokens: 2,
      ...(k === 'input' ? {} : { tools: [{ type: 'function', name: 'f' }] }), [k]: v }), '/v1/responses']);
bodies.push(['responses instructions=1', JSON.stringify({ input: 'x', instructions: 1 }), '/v1/responses']);
bodies.push(['completions echo', JSON.stringify({ prompt: 'x', echo: true }), '/v1/completions']);
bodies.push(['completions suffix', JSON.stringify({ prompt: 'x', suffix: 'y' }), '/v1/completions']);
bodies.push(['completions logprobs 6', JSON.stringify({ prompt: 'x', logprobs: 6 }), '/v1/completions']);
let seed = 1;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
for (let i = 0; i < 60; i++) {
  const b = Buffer.from(good);
  for (let j = 0; j < 1 + (i % 5); j++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
  bodies.push(['mutated ' + i, b]);
}

let all4xx = 0, envelope = 0, results = [];
// Eight at a time: the answers are small, the round trips (in the guest
// through QEMU's user network) what takes the time.
const answers = [];
for (let i = 0; i < bodies.length; i += 8)
  answers.push(...await Promise.all(bodies.slice(i, i + 8).map(([, body, path]) =>
    raw('POST', path || '/v1/chat/completions', body, { 'Content-Type': 'application/json' })
      .catch((e) => ({ status: 0, text: String(e) })))));
for (const [k, [name]] of bodies.entries()) {
  const r = answers[k];
  const is4xx = r.status >= 400 && r.status < 500;
  // A random mutation may still be valid JSON with valid fields: then 200 is right.
  const fine = is4xx || (name.startsWith('mutated') && r.status === 200 &&
    r.json?.object === 'chat.completion' && r.json.usage?.completion_tokens <= 2);
  if (fine) all4xx++; else results.push(`${name}: ${r.status} ${r.text.slice(0, 200)}`);
  if (!is4xx || (r.json?.error && typeof r.json.error.message === 'string' && 'param' in r.json.error && 'code' in r.json.error)) envelope++;
  else results.push(`${name}: no envelope: ${r.text.slice(0, 200)}`);
}
ok(all4xx === bodies.length, `${bodies.length} fuzzed bodies get a 4xx`, results.join('\n'));
ok(envelope === bodies.length, 'every 4xx is an OpenAI error envelope', results.join('\n'));

const bigMB = Number(process.env.RK1828_FUZZ_BIG_MB || 100);
await check(`${bigMB} MB streamed body`, async () => {
  const r = await raw('POST', '/v1/chat/completions', (req) => {
    const chunk = Buffer.alloc(1 << 20, 0x61);
    let sent = 0;
    req.write('{"messages":[{"role":"user","content":"');
    const pump = () => {
      while (sent < bigMB) {
        sent++;
        if (!req.write(chunk)) { req.once('drain', pump); return; }
      }
      req.end('"}]}');
    };
    pump();
  }, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
  ok(r.status === 413 && r.json?.error?.code === 'request_too_large', `${bigMB} MB chunked body: 413 request_too_large`, r.text.slice(0, 200));
});
// ---- framing (raw sockets) ---------------------------------------------------
const u = new URL(BASE);
// One raw request; resolves with the answer's status and JSON and how the
// connection ended ('closed' by the server, or 'open' at the deadline,
// which only a server waiting for a body it cannot delimit reaches).
function rawRequest(text, ms = 30000) {
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname);
    const chunks = [];
    let end = null;
    const finish = (how) => {
      if (end) return;
      end = how;
      clearTimeout(t);
      s.destroy();
      const all = Buffer.concat(chunks).toString('latin1'), at = all.indexOf('\r\n\r\n');
      let json = null;
      try { json = JSON.parse(all.slice(at + 4)); } catch { /* not JSON */ }
      resolve({ how, status: Number(all.split(' ')[1]) || 0, json, text: all });
    };
    const t = setTimeout(() => finish('open'), ms);
    s.on('connect', () => s.write(text));
    s.on('data', (d) => chunks.push(d));
    s.on('end', () => finish('closed'));
    s.on('error', () => finish('closed'));
  });
}
const start = (v = '1.1') => `POST /v1/chat/completions HTTP/${v}\r\nHost: ${u.host}\r\n` +
  (KEY ? `Authorization: Bearer ${KEY}\r\n` : '') + 'Content-Type: application/json\r\n';
const small = '{"messages":[{"role":"user","content":"x"}],"max_tokens":1}';
const chunk = `${small.length.toString(16)}\r\n${small}\r\n0\r\n\r\n`;
const framing = [
  ['Transfer-Encoding: gzip (no end of the body)', 'Transfer-Encoding: gzip\r\n\r\n' + small, 400, 'invalid_transfer_encoding'],
  ['Transfer-Encoding: chunked, gzip', 'Transfer-Encoding: chunked, gzip\r\n\r\n' + chunk, 400, 'invalid_transfer_encoding'],
  ['Transfer-Encoding: gzip, chunked (a coding we do not decode)', 'Transfer-Encoding: gzip, chunked\r\n\r\n' + chunk, 501,
    'unsupported_transfer_encoding'],
  ['Transfer-Encoding: identity', 'Transfer-Encoding: identity\r\n\r\n' + small, 400, 'invalid_transfer_encoding'],
  ['Transfer-Encoding: chunked twice', 'Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n' + chunk, 400,
    'invalid_transfer_encoding'],
  ['Transfer-Encoding and Content-Length', `Transfer-Encoding: chunked\r\nContent-Length: ${chunk.length}\r\n\r\n` + chunk, 400,
    'invalid_header'],
  ['two different Content-Length values', `Content-Length: ${small.length}\r\nContent-Length: ${small.length + 9}\r\n\r\n` + small,
    400, 'invalid_header'],
  ['whitespace before a colon (Content-Length : N)', `Content-Length : ${small.length}\r\n\r\n` + small, 400, 'invalid_header'],
  ['a tab before a colon', `X-Trace\t: 1\r\nContent-Length: ${small.length}\r\n\r\n` + small, 400, 'invalid_header'],
  ['two Host headers', `Host: other\r\nContent-Length: ${small.length}\r\n\r\n` + small, 400, 'invalid_header'],
];
await check('framing', async () => {
  const rs = await Promise.all(framing.map(([, extra]) => rawRequest(start() + extra)));
  for (const [i, [name, , status, code]] of framing.entries()) {
    const r = rs[i];
    ok(r.status === status && r.json?.error?.code === code && 'param' in r.json.error && r.how === 'closed',
       `${name}: ${status} ${code} in the OpenAI envelope, at once, and the connection closed`, { how: r.how, text: r.text.slice(0, 300) });
  }
  const r10 = await rawRequest(start('1.0') + 'Transfer-Encoding: chunked\r\n\r\n' + chunk);
  ok(r10.status === 400 && r10.json?.error?.code === 'invalid_transfer_encoding' && r10.how === 'closed',
     'HTTP/1.0 with Transfer-Encoding: 400 and closed', r10.text.slice(0, 300));
  const good = await rawRequest(start() + 'Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n' + chunk);
  ok(good.status === 200 && good.json?.object === 'chat.completion', 'plain chunked still works', good.text.slice(0, 300));
});

// A chunked body that never ends: read and dropped up to 256 MiB (so
// that a client writing its whole body first sees the 413), then cut.
if (process.env.RK1828_FUZZ_CUT === '1') await check('endless chunked body', async () => {
  let sentMB = 0;
  const r = await raw('POST', '/v1/chat/completions', (req) => {
    const mb = Buffer.alloc(1 << 20, 0x61);
    req.write('{"messages":[{"role":"user","content":"');
    const pump = () => {
      while (sentMB < 400 && !req.destroyed) {
        sentMB++;
        if (!req.write(mb)) { req.once('drain', pump); return; }
      }
      if (!req.destroyed) req.end('"}]}');
    };
    req.on('error', () => {});
    pump();
  }, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }).catch((e) => ({ status: 0, text: String(e.code || e) }));
  ok((r.status === 413 || r.status === 0) && sentMB < 300,
     `a chunked body that does not end is cut at 256 MiB (the client had written ${sentMB} MiB of 400; ${r.status || r.text})`,
     r.text?.slice(0, 200));
});

const h = await raw('GET', '/health');
ok(h.status === 200 && h.json?.status === 'ok', 'the server is still healthy after the fuzzing', h.text);
const g = await raw('POST', '/v1/completions', JSON.stringify({ prompt: 'Once upon a time', max_tokens: 3, temperature: 0 }), { 'Content-Type': 'application/json' });
ok(g.status === 200 && g.json?.usage?.completion_tokens > 0, 'and still generates', g.text.slice(0, 200));
done();
