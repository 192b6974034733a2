// SPDX-License-Identifier: MIT
// Shared helpers of the server tests: TAP output, the SDK client, raw HTTP.
import { createRequire } from 'node:module';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, '../..');
// The npm packages live in build/node (tools/npm-deps, run by make deps).
export const require = createRequire(path.join(root, 'build/node/package.json'));

export const BASE = process.env.RK1828_SERVER_URL || 'http://127.0.0.1:18080';
export const KEY = process.env.RK1828_API_KEY || '';
// RK1828_ENGINE=scripted: the server runs over the scripted test engine
// (build/tests/serve-fake), whose text does not depend on the prompt: the
// tests then check the HTTP layer only, and say so in their names.
export const REAL = process.env.RK1828_ENGINE !== 'scripted';
export const claim = (real, scripted) => (REAL ? real : scripted);

let n = 0, failed = 0;
export function ok(cond, name, diag) {
  n++;
  if (cond) {
    console.log(`ok ${n} - ${name}`);
  } else {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    if (diag !== undefined) console.log('# ' + String(typeof diag === 'string' ? diag : JSON.stringify(diag)).split('\n').join('\n# '));
  }
  return !!cond;
}
export function eq(a, b, name) {
  return ok(JSON.stringify(a) === JSON.stringify(b), name, `got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);
}
export async function check(name, fn) {
  try { await fn(); } catch (e) { ok(false, name, e && e.stack ? e.stack : String(e)); }
}
export function done() {
  console.log(`1..${n}`);
  process.exitCode = failed ? 1 : 0;
}

export function client(opts = {}) {
  const { OpenAI } = require('openai');
  return new OpenAI({ apiKey: KEY || 'none', baseURL: BASE + '/v1', maxRetries: 0, timeout: 600000, ...opts });
}

// Raw HTTP request: body is a Buffer/string or a function(req) that writes it.
export function raw(method, p, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(BASE + p);
    const h = { ...(KEY ? { Authorization: 'Bearer ' + KEY } : {}), ...headers };
    if (typeof body === 'string' || Buffer.isBuffer(body)) h['Content-Length'] = Buffer.byteLength(body);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json = null;
        try { json = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (typeof body === 'function') body(req);
    else { if (body !== undefined && body !== null) req.write(body); req.end(); }
  });
}

export async function metrics() {
  const r = await raw('GET', '/metrics');
  const m = {};
  for (const line of r.text.split('\n')) {
    const x = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([0-9.eE+-]+|NaN|[+-]Inf)$/.exec(line);
    if (x) m[x[1] + (x[2] || '')] = Number(x[3]);
  }
  return m;
}

// waitMetrics(pred, ms): poll /metrics until pred(m) holds; returns m, or
// throws after ms with the last values (a failed wait is a failed check,
// never a silent pass).
export async function waitMetrics(pred, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const m = await metrics();
    if (pred(m)) return m;
    if (Date.now() > end)
      throw new Error(`${what || 'condition'} not reached within ${ms} ms: ` + JSON.stringify(m));
    await new Promise((r) => setTimeout(r, 20));
  }
}

// waitIdle(ms): poll /metrics until no session is active or queued; returns
// the last values either way (the caller's checks then say what was left).
// The deadline only matters when something hangs: a loaded TCG guest
// answers 10-50x slower than a native run.
export async function waitIdle(ms = 120000) {
  const end = Date.now() + ms;
  for (;;) {
    const m = await metrics();
    if (!m.rk1828_sessions_active && !m.rk1828_sessions_queued) return m;
    if (Date.now() > end) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The engine's count of requests that ended with @finish.
export const finished = (m, finish) => m[`rk1828_engine_requests_total{finish="${finish}"}`] || 0;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
