// SPDX-License-Identifier: MIT
// The web UI in headless Chromium (Debian's /usr/bin/chromium driven by
// playwright-core): type a message and see the reply stream in, stop a
// stream, reload and find the conversation, a phone-width layout; saves
// screenshots under build/ (ui-guest-*.png against the guest's server,
// ui-scripted-*.png over the scripted engine). Prints TAP.
import path from 'node:path';
import { BASE, KEY, REAL, ok, done, check, require, root, metrics, waitMetrics, finished } from './lib.mjs';

const { chromium } = require('playwright-core');
const shot = (name) => path.join(root, 'build', `ui-${REAL ? 'guest' : 'scripted'}-${name}.png`);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
// Every wait below is for a condition; its deadline only guards against a
// hang (the guest's server answers 10-50x slower than a native one).
page.setDefaultTimeout(120000);
page.on('pageerror', (e) => ok(false, 'no JavaScript error on the page', e.message));
// The page's Content-Security-Policy must not block any of its own parts
// (Chromium reports each blocked load on the console).
const blocked = [];
page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) blocked.push(m.text()); });

await check('ui', async () => {
  const res = await page.goto(BASE + '/');
  const h = res.headers();
  ok(/frame-ancestors 'none'/.test(h['content-security-policy'] || '') && /script-src 'self'/.test(h['content-security-policy']) &&
     h['x-content-type-options'] === 'nosniff', 'GET / has a Content-Security-Policy (script-src \'self\', frame-ancestors \'none\') and nosniff', h);
  await page.evaluate((k) => localStorage.setItem('rk1828.settings', JSON.stringify({ key: k, temperature: 0, max_tokens: 24, system: '' })), KEY);
  await page.reload();
  ok(await page.title() === 'rk1828 chat', 'GET / serves the embedded UI');
  await page.waitForFunction(() => document.getElementById('m-plan').textContent.includes('card'), null, { timeout: 120000 });
  ok(true, 'the side panel shows the plan from /v1/models');

  // Shift+Enter makes a newline, Enter sends.
  await page.click('#input');
  await page.keyboard.type('Once upon a time');
  await page.keyboard.press('Shift+Enter');
  ok((await page.inputValue('#input')) === 'Once upon a time\n', 'Shift+Enter adds a newline');
  await page.keyboard.press('Backspace');
  // Count the updates of the reply while it streams.
  await page.evaluate(() => {
    window.__updates = 0;
    new MutationObserver((ms) => { for (const m of ms) { const n = m.target.nodeType === 1 ? m.target : m.target.parentElement; if (n && n.closest('.msg.assistant.streaming .body')) window.__updates++; } })
      .observe(document.getElementById('messages'), { subtree: true, childList: true, characterData: true });
  });
  await page.keyboard.press('Enter');
  ok((await page.inputValue('#input')) === '', 'Enter sends (the input is cleared)');
  await page.waitForSelector('.msg.assistant', { timeout: 120000 });
  await page.waitForFunction(() => !document.querySelector('.msg.streaming'), null, { timeout: 120000 });
  const updates = await page.evaluate(() => window.__updates);
  const reply = await page.textContent('.msg.assistant .body');
  ok(reply.length > 0 && updates >= 3, `the reply streamed in (${updates} updates while streaming)`, reply);
  const meta = await page.textContent('.msg.assistant .meta');
  ok(/TTFT/.test(meta) && /tokens/.test(meta), 'the reply shows TTFT and tokens', meta);
  ok(/\d/.test(await page.textContent('#s-ttft')), 'the side panel shows the last TTFT');
  await page.screenshot({ path: shot('chat') });

  // Stop: a long reply, stopped after it started.
  await page.evaluate(() => { const s = JSON.parse(localStorage.getItem('rk1828.settings') || '{}'); s.max_tokens = ''; localStorage.setItem('rk1828.settings', JSON.stringify(s)); });
  await page.reload();
  await page.waitForSelector('.msg');
  await page.fill('#input', 'Tell me a long story');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => { const n = document.querySelectorAll('.msg.assistant'); return n.length === 2 && n[1].querySelector('.body').textContent.length > 0; }, null, { timeout: 120000 });
  ok(await page.isVisible('#stop'), 'the stop button shows while streaming');
  const m0 = await metrics();
  await page.click('#stop');
  await page.waitForFunction(() => !document.querySelector('.msg.streaming'), null, { timeout: 120000 });
  const meta2 = await page.textContent('.msg.assistant:last-of-type .meta');
  ok(/stopped/.test(meta2) && await page.isVisible('#send'), 'stop ends the stream and marks the reply stopped', meta2);
  const m1 = await waitMetrics((m) => finished(m, 'cancelled') > finished(m0, 'cancelled') && !m.rk1828_sessions_active, 120000,
    'the stopped request cancelled');
  ok(finished(m1, 'cancelled') === finished(m0, 'cancelled') + 1 && !m1.rk1828_sessions_active,
     'stopping in the browser cancelled the request in the engine and freed its session', { m0, m1 });

  // Reload: the conversation comes back from localStorage.
  const before = await page.$$eval('.msg', (n) => n.map((x) => x.querySelector('.body').textContent));
  await page.reload();
  await page.waitForSelector('.msg');
  const after = await page.$$eval('.msg', (n) => n.map((x) => x.querySelector('.body').textContent));
  ok(JSON.stringify(after) === JSON.stringify(before) && after.length === 4, 'reload finds the conversation', { before, after });
  ok((await page.textContent('#chats')).includes('Once upon a time'), 'the conversation is listed in the side panel');

  // New chat, then a phone-width window.
  await page.click('#new-chat');
  ok((await page.$$('.msg')).length === 0, 'new chat starts empty');
  await page.setViewportSize({ width: 390, height: 780 });
  await page.click('#chats .chat:nth-child(2) a', { force: true }).catch(() => {});
  await page.evaluate(() => { document.querySelector('#chats .chat:nth-child(2) a')?.click(); });
  const w = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, side: getComputedStyle(document.getElementById('side')).position }));
  ok(w.doc <= 390 && w.side === 'fixed', 'phone width: no horizontal scroll, the panel becomes a drawer', w);
  await page.screenshot({ path: shot('phone') });
  ok(blocked.length === 0, 'the Content-Security-Policy blocked nothing the UI uses (scripts, styles, icons, fetches, the settings dialog)', blocked);
});
await browser.close();
done();
