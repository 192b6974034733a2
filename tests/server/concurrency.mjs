// SPDX-License-Identifier: MIT
// Concurrency: 16 clients send 64 greedy /v1/completions requests (half
// streamed, prompts sharing prefixes, every 8th aborted after its first
// delta). None may be lost or fail, every finished one must equal its
// reference (RK1828_REFS: a JSON list of {prompt, max_tokens, text}; in the
// guest made with `rk1828-llm run` alone on the same cards, over the
// scripted engine its known text), and the server must be healthy and
// idle afterwards, with the engine's counts matching. Prints TAP.
import fs from 'node:fs';
import { ok, done, client, raw, waitIdle, finished as ended, claim, require } from './lib.mjs';

const OpenAI = require('openai');
const refs = JSON.parse(fs.readFileSync(process.env.RK1828_REFS, 'utf8'));
const c = client();
const N = 64, CLIENTS = 16;
const model = (await c.models.list()).data[0];
ok(CLIENTS <= model.parallel + model.queue, `${CLIENTS} clients fit ${model.parallel} slots and a queue of ${model.queue} (no 503 expected)`, model);
const m0 = await waitIdle();
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
ok(bad.length === 0, claim('every greedy completion equals the same prompt run alone with rk1828-llm run',
  'every completion equals the scripted engine\'s text for its max_tokens'), bad.slice(0, 8).join('\n'));
const m = await waitIdle();
ok(!m.rk1828_sessions_active && !m.rk1828_sessions_queued, 'no session left active or queued', m);
const d = (f) => ended(m, f) - ended(m0, f);
ok(d('stop') + d('length') + d('cancelled') === N && d('error') === 0 && d('cancelled') <= aborted,
   `the engine finished all ${N}: ${d('stop') + d('length')} complete, ${d('cancelled')} cancelled (of ${aborted} aborted), none failed`,
   { stop: d('stop'), length: d('length'), cancelled: d('cancelled'), error: d('error') });
ok(m.rk1828_prefix_cache_hits_total > m0.rk1828_prefix_cache_hits_total, 'prompts sharing prefixes hit the prefix cache',
   { before: m0.rk1828_prefix_cache_hits_total, after: m.rk1828_prefix_cache_hits_total });
const h = await raw('GET', '/health');
ok(h.status === 200, 'healthy after the concurrency run', h.text);
done();
