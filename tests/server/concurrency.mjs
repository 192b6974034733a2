// SPDX-License-Identifier: MIT
// Concurrency: 16 clients send 64 greedy /v1/completions requests (half
// streamed, prompts sharing prefixes, every 8th aborted after its first
// delta). None may be lost or fail, every finished one must equal the same
// prompt run alone (RK1828_REFS: a JSON list of {prompt, max_tokens, text}
// made with `rk1828-llm run` on the same cards), and the server must be
// healthy and idle afterwards. Prints TAP.
import fs from 'node:fs';
import { ok, done, client, raw, waitIdle, require } from './lib.mjs';

const OpenAI = require('openai');
const refs = JSON.parse(fs.readFileSync(process.env.RK1828_REFS, 'utf8'));
const c = client();
const N = 64, CLIENTS = 16;
const jobs = Array.from({ length: N }, (_, i) => ({ i, ref: refs[i % refs.length], stream: i % 2 === 1, abort: i % 8 === 7 }));
const bad = [];
let finished = 0, aborted = 0, next = 0;

async function one(j) {
  const args = { prompt: j.ref.prompt, max_tokens: j.ref.max_tokens, temperature: 0 };
  if (!j.stream && !j.abort) {
    const r = await c.completions.create(args);
    return r.choices[0].text;
  }
  const ac = new AbortController();
  const s = await c.completions.create({ ...args, stream: true }, { signal: ac.signal });
  let t = '';
  try {
    for await (const ch of s) {
      t += ch.choices[0]?.text || '';
      if (j.abort && t) { ac.abort(); }
    }
  } catch (e) {
    if (j.abort && (e instanceof OpenAI.APIUserAbortError || e.name === 'AbortError')) return null;
    throw e;
  }
  return j.abort ? null : t;
}

async function worker() {
  while (next < N) {
    const j = jobs[next++];
    try {
      const t = await one(j);
      if (t === null) { aborted++; continue; }
      finished++;
      if (t !== j.ref.text) bad.push(`#${j.i} ${JSON.stringify(j.ref.prompt)}: got ${JSON.stringify(t)}, alone ${JSON.stringify(j.ref.text)}`);
    } catch (e) {
      bad.push(`#${j.i} failed: ${e.status || ''} ${e.message}`);
    }
  }
}
await Promise.all(Array.from({ length: CLIENTS }, worker));
const expectAborted = jobs.filter((j) => j.abort).length;
ok(finished + aborted === N && aborted <= expectAborted && finished >= N - expectAborted,
   `${CLIENTS} clients, ${N} requests: ${finished} finished, ${aborted} aborted, none lost`, bad.join('\n'));
ok(bad.length === 0, 'every greedy completion equals the same prompt run alone with rk1828-llm run', bad.slice(0, 8).join('\n'));
const m = await waitIdle(30000);
ok(!m.rk1828_sessions_active && !m.rk1828_sessions_queued, 'no session left active or queued', m);
const h = await raw('GET', '/health');
ok(h.status === 200, 'healthy after the concurrency run', h.text);
done();
