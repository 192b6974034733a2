// SPDX-License-Identifier: MIT
// The server on an open network, as an attacker would try it, over raw
// sockets (RK1828_NET_URL: a server without --api-key started by run-fake
// with short deadlines, --header-timeout RK1828_NET_HEADER_S and
// --body-timeout RK1828_NET_BODY_S, --per-ip-limit RK1828_NET_PER_IP,
// --cors-origin http://app.example:3000 and --allowed-host llm.test; its
// stderr in RK1828_NET_LOG):
//  - clients trickling their headers or their body a byte at a time are
//    answered 408 and closed at the deadline, while other clients are
//    served throughout; a kept-alive connection idle past the header
//    deadline is closed silently;
//  - one address gets at most --per-ip-limit connections;
//  - without a key, a Host that is not one of the server's names is a
//    421 (DNS rebinding), an Origin of another site a 403 (also its
//    preflight and its "simple" text/plain POST), the page's own origin,
//    localhost's and --cors-origin's get their Access-Control-Allow-Origin;
//  - the web UI has its Content-Security-Policy, nosniff and
//    frame-ancestors; the request path is logged with control bytes
//    escaped.
// Every wait is for a condition, with a deadline only a hang reaches.
// Prints TAP.
import fs from 'node:fs';
import net from 'node:net';
import { ok, check, done, sleep } from './lib.mjs';

const url = new URL(process.env.RK1828_NET_URL || 'http://127.0.0.1:18081');
const PORT = Number(url.port), HOST = url.hostname;
const HEADER_S = Number(process.env.RK1828_NET_HEADER_S || 2);
const BODY_S = Number(process.env.RK1828_NET_BODY_S || 2);
const PER_IP = Number(process.env.RK1828_NET_PER_IP || 8);
const LOG = process.env.RK1828_NET_LOG;
// Deadlines only a hang reaches: the server's own deadline is HEADER_S.
const HANG_MS = 30000;

// One raw connection: send @data (or let @writer(sock) write), collect
// what comes back until the server closes, @ms passes or @stop(buf) says.
function talk(data, { ms = HANG_MS, writer, stop } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(PORT, HOST);
    const chunks = [];
    let end = null, timer = null;
    const finish = (how) => {
      if (end) return;
      end = how;
      clearTimeout(timer);
      if (writer?.stop) writer.stop();
      s.destroy();
      resolve({ how, ...parse(Buffer.concat(chunks)) });
    };
    s.on('connect', () => { if (data) s.write(data); if (writer) writer(s); });
    s.on('data', (d) => { chunks.push(d); if (stop && stop(Buffer.concat(chunks))) finish('stopped'); });
    s.on('end', () => finish('closed'));
    s.on('error', (e) => finish(e.code === 'ECONNRESET' || e.code === 'EPIPE' ? 'closed' : e.code));
    timer = setTimeout(() => finish('open'), ms);
  });
}

function parse(buf) {
  const text = buf.toString('latin1');
  const at = text.indexOf('\r\n\r\n');
  if (at < 0) return { status: 0, headers: {}, body: '', json: null, raw: text };
  const lines = text.slice(0, at).split('\r\n');
  const headers = {};
  for (const l of lines.slice(1)) {
    const k = l.slice(0, l.indexOf(':')).toLowerCase();
    headers[k] = (headers[k] ? headers[k] + ', ' : '') + l.slice(l.indexOf(':') + 1).trim();
  }
  const body = text.slice(at + 4);
  let json = null;
  try { json = JSON.parse(body); } catch { /* not JSON */ }
  return { status: Number(lines[0].split(' ')[1]), headers, body, json, raw: text };
}

// Requests the engine was given so far (admitted, or queued).
async function engineSeen() {
  const r = await req('GET', '/metrics', ['Host: localhost']);
  const v = (k) => Number((new RegExp(`^${k} (\\S+)$`, 'm').exec(r.body) || [])[1] || 0);
  return v('rk1828_prefix_cache_hits_total') + v('rk1828_prefix_cache_misses_total') + v('rk1828_sessions_queued');
}

const envelope = (r) => r.json?.error && typeof r.json.error.message === 'string' && 'param' in r.json.error && 'code' in r.json.error;

// A whole request with Connection: close; @h the header lines.
const req = (method, path, h = [], body = '') =>
  talk(`${method} ${path} HTTP/1.1\r\n${h.map((x) => x + '\r\n').join('')}` +
       `${body ? `Content-Length: ${Buffer.byteLength(body)}\r\n` : ''}Connection: close\r\n\r\n${body}`);

// A writer that sends @first, then one byte of @fill every @every ms.
function trickle(first, fill, every = 300) {
  let t = null;
  const w = (s) => {
    s.write(first);
    t = setInterval(() => { if (!s.destroyed) s.write(fill); }, every);
  };
  w.stop = () => clearInterval(t);
  return w;
}

// ---- deadlines ---------------------------------------------------------------
await check('trickling clients', async () => {
  // Three clients trickle their headers, one its body, for up to HANG_MS
  // (a byte every 300 ms restarts an inactivity timeout for ever).
  const heads = [0, 1, 2].map(() => talk(null, {
    writer: trickle(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: `, 'a'),
  }));
  const body = talk(null, {
    writer: trickle(`POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`, ' '),
  });
  // Meanwhile other clients are served, until every trickler is done.
  let served = 0, failed = 0, over = false;
  const all = Promise.all([...heads, body]).then((r) => { over = true; return r; });
  while (!over) {
    const h = await req('GET', '/health', ['Host: localhost']);
    if (h.status === 200) served++; else failed++;
    await sleep(100);
  }
  const [h0, h1, h2, b] = await all;
  for (const [i, r] of [h0, h1, h2].entries())
    ok(r.how === 'closed' && r.status === 408 && r.json?.error?.code === 'request_timeout' && envelope(r),
       `trickled headers #${i}: answered 408 request_timeout and closed at the ${HEADER_S} s header deadline (not kept open by each byte)`,
       { how: r.how, raw: r.raw.slice(0, 300) });
  ok(b.how === 'closed' && b.status === 408 && b.json?.error?.code === 'request_timeout' && /body/.test(b.json.error.message),
     `a trickled body: answered 408 and closed at the ${BODY_S} s body deadline`, { how: b.how, raw: b.raw.slice(0, 300) });
  ok(served > 0 && failed === 0, `other clients were served throughout (${served} GET /health, ${failed} failed)`);
});

await check('kept-alive idle connection', async () => {
  // One answer, then nothing: closed after the header deadline, silently.
  const r = await talk('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  ok(r.how === 'closed' && r.status === 200 && r.json?.status === 'ok' && !r.raw.includes(' 408 '),
     `a kept-alive connection idle after its answer is closed at the ${HEADER_S} s header deadline without a 408`,
     { how: r.how, raw: r.raw.slice(0, 200) });
});

await check('per-address connection limit', async () => {
  const socks = [];
  let dropped = 0;	// of these, closed by the server
  for (let i = 0; i < PER_IP; i++) {
    const s = net.connect(PORT, HOST);
    await new Promise((res, rej) => { s.on('connect', res); s.on('error', rej); });
    s.on('end', () => { dropped++; });
    s.on('error', () => {});
    socks.push(s);
  }
  const over = await req('GET', '/health', ['Host: localhost']);
  // libmicrohttpd's pool threads accept and count concurrently: when the
  // thread holding the 9th connection counts it before the thread holding
  // one of the first 8 does, that earlier one is the one refused. Either
  // way the address never holds more than PER_IP.
  if (over.status === 200) {
    const end = Date.now() + 5000;
    while (!dropped && Date.now() < end) await sleep(20);
  }
  ok((over.how === 'closed' && over.status === 0) || (over.status === 200 && dropped === 1),
     `connection ${PER_IP + 1} from one address is refused while ${PER_IP} are open (--per-ip-limit ${PER_IP}), or one of those ${PER_IP} is`,
     { how: over.how, dropped, raw: over.raw.slice(0, 200) });
  for (const s of socks) s.destroy();
  // The server forgets the closed ones as soon as its poll sees them.
  const end = Date.now() + HANG_MS;
  let again;
  do {
    again = await req('GET', '/health', ['Host: localhost']);
    if (again.status !== 200) await sleep(50);
  } while (again.status !== 200 && Date.now() < end);
  ok(again.status === 200, 'once they closed, the address is served again', again.raw.slice(0, 200));
});

// ---- Host and Origin (no key) ------------------------------------------------
const self = `${HOST}:${PORT}`;
const chat = JSON.stringify({ messages: [{ role: 'user', content: 'x' }], max_tokens: 2 });
await check('Host', async () => {
  for (const host of [`localhost:${PORT}`, 'localhost', `127.0.0.1:${PORT}`, `[::1]:${PORT}`, `192.168.7.9:${PORT}`,
    `llm.test:${PORT}`, `app.localhost:${PORT}`]) {
    const r = await req('GET', '/v1/models', [`Host: ${host}`]);
    ok(r.status === 200, `Host ${host}: served (a loopback name, an address, --allowed-host)`, r.raw.slice(0, 200));
  }
  for (const host of [`evil.example:${PORT}`, 'localhost.evil.example', 'rebind.attacker.test']) {
    const r = await req('GET', '/v1/models', [`Host: ${host}`]);
    ok(r.status === 421 && r.json?.error?.code === 'host_not_allowed' && envelope(r),
       `Host ${host}: 421 host_not_allowed (a DNS-rebinding page sends its own name)`, r.raw.slice(0, 300));
  }
  // DNS rebinding: the page's origin is the attacker's name, same origin to the browser.
  const n0 = await engineSeen();
  const rb = await req('POST', '/v1/chat/completions', [`Host: evil.example:${PORT}`, `Origin: http://evil.example:${PORT}`,
    'Content-Type: application/json'], chat);
  const n1 = await engineSeen();
  ok(rb.status === 421 && n1 === n0, 'a rebound page posting to its "own" origin: 421, the engine got nothing',
     { raw: rb.raw.slice(0, 200), n0, n1 });
  const bad = await req('GET', '/v1/models', ['Host: a b']);
  ok(bad.status === 400 && bad.json?.error?.code === 'invalid_host', 'Host "a b": 400 invalid_host', bad.raw.slice(0, 200));
});

await check('Origin', async () => {
  const n0 = await engineSeen();
  const own = await req('POST', '/v1/chat/completions', [`Host: ${self}`, `Origin: http://${self}`, 'Content-Type: application/json'], chat);
  ok(await engineSeen() === n0 + 1, 'engineSeen() counts a generation (the checks of "got nothing" below can fail)');
  ok(own.status === 200 && own.headers['access-control-allow-origin'] === `http://${self}` && /Origin/.test(own.headers.vary || ''),
     'the server\'s own page (the web UI): 200, its origin echoed, Vary: Origin', own.raw.slice(0, 400));
  const lo = await req('GET', '/v1/models', [`Host: ${self}`, 'Origin: http://localhost:5173']);
  ok(lo.status === 200 && lo.headers['access-control-allow-origin'] === 'http://localhost:5173', 'a page on localhost: allowed',
     lo.raw.slice(0, 300));
  const listed = await req('GET', '/v1/models', [`Host: ${self}`, 'Origin: http://app.example:3000']);
  ok(listed.status === 200 && listed.headers['access-control-allow-origin'] === 'http://app.example:3000',
     '--cors-origin http://app.example:3000: allowed', listed.raw.slice(0, 300));
  const none = await req('GET', '/v1/models', [`Host: ${self}`]);
  ok(none.status === 200 && !('access-control-allow-origin' in none.headers), 'no Origin (curl, the SDKs): served, no CORS header',
     none.raw.slice(0, 300));
  const evil = await req('GET', '/v1/models', [`Host: ${self}`, 'Origin: https://evil.example']);
  ok(evil.status === 403 && evil.json?.error?.code === 'origin_not_allowed' && envelope(evil) &&
     !('access-control-allow-origin' in evil.headers), 'another site: 403 origin_not_allowed, no CORS header (it cannot read it)',
     evil.raw.slice(0, 300));
  const c0 = await engineSeen();
  const csrf = await req('POST', '/v1/chat/completions', [`Host: ${self}`, 'Origin: https://evil.example', 'Content-Type: text/plain'], chat);
  const c1 = await engineSeen();
  ok(csrf.status === 403 && c1 === c0, 'another site\'s "simple" text/plain POST (no preflight): 403, the engine got nothing',
     { raw: csrf.raw.slice(0, 200), c0, c1 });
  const pre = await req('OPTIONS', '/v1/chat/completions', [`Host: ${self}`, 'Origin: https://evil.example',
    'Access-Control-Request-Method: POST']);
  ok(pre.status === 403, 'another site\'s preflight: 403', pre.raw.slice(0, 200));
  const pre2 = await req('OPTIONS', '/v1/chat/completions', [`Host: ${self}`, 'Origin: http://app.example:3000',
    'Access-Control-Request-Method: POST']);
  ok(pre2.status === 204 && pre2.headers['access-control-allow-origin'] === 'http://app.example:3000' &&
     /POST/.test(pre2.headers['access-control-allow-methods'] || ''), 'a listed origin\'s preflight: 204 with its origin', pre2.raw.slice(0, 300));
  // The SDK's helpers (stream(), parse(), runTools()) send headers of
  // their own: a taken origin's preflight allows the names it asks for.
  const pre3 = await req('OPTIONS', '/v1/chat/completions', [`Host: ${self}`, 'Origin: http://app.example:3000',
    'Access-Control-Request-Method: POST',
    'Access-Control-Request-Headers: authorization,content-type,x-stainless-helper-method,x-stainless-os']);
  const allowed = (pre3.headers['access-control-allow-headers'] || '').toLowerCase().split(/\s*,\s*/);
  ok(pre3.status === 204 && ['authorization', 'content-type', 'x-stainless-helper-method', 'x-stainless-os']
    .every((n) => allowed.includes(n)), 'a listed origin\'s preflight allows the headers it asks for (the SDK\'s X-Stainless-Helper-Method)',
     pre3.raw.slice(0, 400));
});

await check('web UI headers', async () => {
  const ui = await req('GET', '/', [`Host: ${self}`]);
  const csp = ui.headers['content-security-policy'] || '';
  ok(ui.status === 200 && /frame-ancestors 'none'/.test(csp) && /script-src 'self'/.test(csp) && /default-src 'none'/.test(csp),
     'GET /: Content-Security-Policy with script-src \'self\' and frame-ancestors \'none\'', ui.headers);
  ok(ui.headers['x-content-type-options'] === 'nosniff' && ui.headers['x-frame-options'] === 'DENY',
     'GET /: X-Content-Type-Options nosniff, X-Frame-Options DENY', ui.headers);
  const api = await req('GET', '/v1/models', [`Host: ${self}`]);
  ok(api.headers['x-content-type-options'] === 'nosniff', 'API answers: X-Content-Type-Options nosniff', api.headers);
});

// ---- the log -----------------------------------------------------------------
await check('log escaping', async () => {
  const r = await req('GET', '/x%0a127.0.0.1%20GET%20/forged%20200%1b[31m%5c', [`Host: ${self}`]);
  ok(r.status === 404, 'a path with %0a, %20, %1b and %5c: 404', r.raw.slice(0, 200));
  const end = Date.now() + HANG_MS;
  let log = '';
  while (Date.now() < end && !log.includes('/x\\x0a')) { await sleep(50); log = fs.readFileSync(LOG, 'latin1'); }
  const lines = log.split('\n');
  ok(lines.some((l) => l.includes(' GET /x\\x0a127.0.0.1\\x20GET\\x20/forged\\x20200\\x1b[31m\\x5c 404 ')) &&
     !lines.some((l) => l.startsWith('127.0.0.1 GET /forged')) && !log.includes('\x1b'),
     'the log line escapes the path\'s control bytes, spaces and backslashes (\\xHH): no forged line, no terminal escape',
     lines.filter((l) => l.includes('/x')));
});
done();
