// SPDX-License-Identifier: MIT
// rk1828 web UI: a chat over the server's own /v1/chat/completions (SSE),
// conversations in localStorage, a side panel fed by /v1/models, /health
// and /metrics. Plain browser JavaScript, no build step, no dependencies.
'use strict';

const $ = (id) => document.getElementById(id);
const KEY_CHATS = 'rk1828.chats', KEY_CUR = 'rk1828.current', KEY_SET = 'rk1828.settings';

const state = {
  chats: load(KEY_CHATS, []),
  current: localStorage.getItem(KEY_CUR),
  settings: Object.assign({ system: '', temperature: 0.8, max_tokens: '', key: '' }, load(KEY_SET, {})),
  abort: null,
  model: null,
};

function load(k, def) {
  try { const v = JSON.parse(localStorage.getItem(k)); return v ?? def; } catch { return def; }
}
function save() {
  localStorage.setItem(KEY_CHATS, JSON.stringify(state.chats));
  if (state.current) localStorage.setItem(KEY_CUR, state.current);
}
function headers() {
  const h = { 'Content-Type': 'application/json' };
  if (state.settings.key) h.Authorization = 'Bearer ' + state.settings.key;
  return h;
}
function chat() { return state.chats.find((c) => c.id === state.current); }
function newChat() {
  const c = { id: 'c' + Date.now().toString(36) + Math.random().toString(36).slice(2, 6),
              title: 'New chat', messages: [], updated: Date.now() };
  state.chats.unshift(c);
  state.current = c.id;
  save();
  return c;
}

// ---- rendering -----------------------------------------------------------
function esc(s) {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
}
function inline(s) {
  return esc(s).replace(/`([^`\n]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>');
}
// Markdown subset: ``` fenced code blocks (also while still open), `code`,
// **bold**, paragraphs on blank lines.
function renderText(text) {
  const parts = text.split(/^```/m);
  let html = '';
  parts.forEach((p, i) => {
    if (i % 2) {
      const nl = p.indexOf('\n');
      const lang = nl < 0 ? '' : p.slice(0, nl).trim();
      const code = nl < 0 ? '' : p.slice(nl + 1).replace(/\n$/, '');
      html += '<pre><code' + (lang ? ' data-lang="' + esc(lang) + '"' : '') + '>' + esc(code) + '</code></pre>';
    } else {
      p.split(/\n{2,}/).forEach((para) => {
        const t = para.replace(/^\n+|\n+$/g, '');
        if (t) html += '<p>' + inline(t) + '</p>';
      });
    }
  });
  return html;
}
function msgNode(m) {
  const d = document.createElement('div');
  d.className = 'msg ' + m.role + (m.error ? ' error' : '');
  d.innerHTML = '<div class="who">' + (m.role === 'user' ? 'You' : 'Assistant') + '</div><div class="body"></div><div class="meta"></div>';
  fillMsg(d, m);
  return d;
}
function fillMsg(d, m) {
  const body = d.querySelector('.body');
  if (m.role === 'user') body.textContent = m.content; else body.innerHTML = renderText(m.content);
  if (m.reasoning) {
    // The model's reasoning (delta.reasoning_content), folded above the answer.
    const det = document.createElement('details');
    det.className = 'think';
    det.open = !m.content;
    const sum = document.createElement('summary');
    sum.textContent = 'Thinking';
    const txt = document.createElement('div');
    txt.textContent = m.reasoning;
    det.append(sum, txt);
    body.prepend(det);
  }
  d.querySelector('.meta').textContent = m.meta || '';
}
function renderChats() {
  const nav = $('chats');
  nav.innerHTML = '';
  for (const c of state.chats) {
    const row = document.createElement('div');
    row.className = 'chat' + (c.id === state.current ? ' current' : '');
    const a = document.createElement('a');
    a.href = '#'; a.textContent = c.title; a.title = c.title;
    a.onclick = (e) => { e.preventDefault(); if (!state.abort) { state.current = c.id; save(); render(); closeSide(); } };
    const del = document.createElement('button');
    del.textContent = '\u00d7'; del.title = 'Delete'; del.setAttribute('aria-label', 'Delete ' + c.title);
    del.onclick = () => {
      if (state.abort && c.id === state.current) return;
      state.chats = state.chats.filter((x) => x !== c);
      if (state.current === c.id) state.current = state.chats[0]?.id || null;
      save(); render();
    };
    row.append(a, del);
    nav.append(row);
  }
}
function render() {
  const c = chat();
  const box = $('messages');
  box.querySelectorAll('.msg').forEach((n) => n.remove());
  $('empty').hidden = !!(c && c.messages.length);
  $('title').textContent = c ? c.title : 'New chat';
  if (c) for (const m of c.messages) box.append(msgNode(m));
  box.scrollTop = box.scrollHeight;
  renderChats();
}

// ---- sending -------------------------------------------------------------
function setBusy(b) {
  $('send').hidden = b; $('stop').hidden = !b; $('new-chat').disabled = b;
}
function fmtMs(ms) { return ms >= 1000 ? (ms / 1000).toFixed(2) + ' s' : Math.round(ms) + ' ms'; }

async function send(text) {
  let c = chat() || newChat();
  if (!c.messages.length) c.title = text.slice(0, 48) || 'New chat';
  c.messages.push({ role: 'user', content: text });
  const reply = { role: 'assistant', content: '' };
  c.messages.push(reply);
  c.updated = Date.now();
  save(); render();
  const node = $('messages').lastElementChild;
  node.classList.add('streaming');
  const msgs = [];
  if (state.settings.system) msgs.push({ role: 'system', content: state.settings.system });
  for (const m of c.messages.slice(0, -1)) if (!m.error) msgs.push({ role: m.role, content: m.content });
  const body = { messages: msgs, stream: true, stream_options: { include_usage: true },
                 temperature: Number(state.settings.temperature) };
  if (state.settings.max_tokens) body.max_tokens = Number(state.settings.max_tokens);
  if (state.model) body.model = state.model.id;
  const ac = new AbortController();
  state.abort = ac; setBusy(true);
  const t0 = performance.now();
  let tFirst = 0, finish = '', usage = null, timings = null, stopped = false;
  try {
    const res = await fetch('/v1/chat/completions', { method: 'POST', headers: headers(), body: JSON.stringify(body), signal: ac.signal });
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { msg = (await res.json()).error.message; } catch { /* keep the status */ }
      throw new Error(msg);
    }
    const rd = res.body.getReader(), dec = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await rd.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, i); buf = buf.slice(i + 2);
        for (const line of ev.split('\n')) {
          if (!line.startsWith('data: ')) continue;
          const data = line.slice(6);
          if (data === '[DONE]') continue;
          const j = JSON.parse(data);
          if (j.error) throw new Error(j.error.message);
          const ch = j.choices && j.choices[0];
          if (ch && ch.delta && (ch.delta.content || ch.delta.reasoning_content)) {
            if (!tFirst) tFirst = performance.now();
            reply.content += ch.delta.content || '';
            if (ch.delta.reasoning_content) reply.reasoning = (reply.reasoning || '') + ch.delta.reasoning_content;
            fillMsg(node, reply);
            const box = $('messages');
            if (box.scrollHeight - box.scrollTop - box.clientHeight < 120) box.scrollTop = box.scrollHeight;
          }
          if (ch && ch.finish_reason) finish = ch.finish_reason;
          if (j.usage) usage = j.usage;
          if (j.timings) timings = j.timings;
        }
      }
    }
  } catch (e) {
    if (e.name === 'AbortError') stopped = true;
    else { reply.error = true; reply.content = reply.content || ('Error: ' + e.message); if (reply.content !== 'Error: ' + e.message) reply.meta = 'Error: ' + e.message; }
  }
  state.abort = null; setBusy(false);
  node.classList.remove('streaming');
  const meta = [];
  if (stopped) meta.push('stopped');
  if (finish === 'length') meta.push('max tokens reached');
  if (timings) {
    meta.push('TTFT ' + fmtMs(timings.ttft_ms));
    if (timings.decode_tokens_per_second) meta.push(timings.decode_tokens_per_second.toFixed(1) + ' tokens/s');
    $('s-ttft').textContent = fmtMs(timings.ttft_ms);
    $('s-tps').textContent = timings.decode_tokens_per_second ? timings.decode_tokens_per_second.toFixed(1) + ' tokens/s' : '\u2013';
  } else if (tFirst) {
    $('s-ttft').textContent = fmtMs(tFirst - t0) + ' (client)';
  }
  if (usage) {
    meta.push(usage.completion_tokens + ' tokens');
    $('s-tokens').textContent = usage.prompt_tokens + ' in (' + usage.prompt_tokens_details.cached_tokens + ' cached), ' + usage.completion_tokens + ' out';
  }
  if (!reply.error || !reply.meta) reply.meta = meta.join(' \u00b7 ') || reply.meta;
  fillMsg(node, reply);
  if (reply.error) node.classList.add('error');
  c.updated = Date.now();
  save();
  refreshStats();
}

// ---- side panel ----------------------------------------------------------
async function refreshModel() {
  try {
    const r = await fetch('/v1/models', { headers: headers() });
    if (!r.ok) return;
    const m = (await r.json()).data[0];
    state.model = m;
    $('m-id').textContent = m.id;
    $('m-cards').textContent = (m.cards || []).join(', ') || '\u2013';
    $('m-plan').textContent = m.plan || '\u2013';
    $('m-ctx').textContent = m.ctx ? m.ctx + ' tokens' : '\u2013';
    $('m-sessions').textContent = m.parallel || '\u2013';
  } catch { /* server not up yet */ }
}
function metric(txt, name) {
  const re = new RegExp('^' + name + '(\\{[^}]*\\})? ([0-9.eE+-]+)$', 'gm');
  const out = []; let m;
  while ((m = re.exec(txt))) out.push({ labels: m[1] || '', v: Number(m[2]) });
  return out;
}
async function refreshStats() {
  try {
    const h = await fetch('/health');
    const hj = await h.json();
    $('s-health').textContent = h.ok ? 'ready' : (hj.status || 'unavailable') + (hj.progress !== undefined ? ' ' + Math.round(hj.progress * 100) + '%' : '');
    if (h.ok && !state.model) refreshModel();
    const r = await fetch('/metrics', { headers: headers() });
    if (!r.ok) return;
    const t = await r.text();
    const a = metric(t, 'rk1828_sessions_active')[0], q = metric(t, 'rk1828_sessions_queued')[0];
    $('s-active').textContent = a ? a.v + ' active, ' + (q ? q.v : 0) + ' queued' : '\u2013';
    const hit = metric(t, 'rk1828_prefix_cache_hits_total')[0], miss = metric(t, 'rk1828_prefix_cache_misses_total')[0];
    $('s-hits').textContent = hit ? hit.v + ' / ' + (hit.v + (miss ? miss.v : 0)) : '\u2013';
    const busy = metric(t, 'rk1828_card_busy_ratio');
    $('s-busy').textContent = busy.length ? busy.map((b) => Math.round(b.v * 100) + '%').join(' \u00b7 ') : '\u2013';
  } catch { $('s-health').textContent = 'unreachable'; }
}

// ---- wiring --------------------------------------------------------------
function closeSide() { document.body.classList.remove('side-open'); }
function grow() { const t = $('input'); t.style.height = 'auto'; t.style.height = Math.min(t.scrollHeight, window.innerHeight * 0.4) + 'px'; }

$('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('input').value;
  if (!t.trim() || state.abort) return;
  $('input').value = ''; grow();
  send(t);
});
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); $('composer').requestSubmit(); }
});
$('input').addEventListener('input', grow);
$('stop').onclick = () => state.abort && state.abort.abort();
$('new-chat').onclick = () => { if (state.abort) return; const c = chat(); if (!c || c.messages.length) newChat(); render(); closeSide(); $('input').focus(); };
$('open-side').onclick = () => document.body.classList.add('side-open');
$('close-side').onclick = closeSide;
$('open-settings').onclick = () => {
  const s = state.settings;
  $('set-system').value = s.system; $('set-temp').value = s.temperature; $('set-temp-out').textContent = s.temperature;
  $('set-max').value = s.max_tokens; $('set-key').value = s.key;
  $('settings').showModal();
};
$('set-temp').oninput = () => { $('set-temp-out').textContent = $('set-temp').value; };
$('settings').addEventListener('close', () => {
  if ($('settings').returnValue !== 'ok') return;
  state.settings = { system: $('set-system').value, temperature: Number($('set-temp').value),
                     max_tokens: $('set-max').value, key: $('set-key').value };
  localStorage.setItem(KEY_SET, JSON.stringify(state.settings));
  refreshModel(); refreshStats();
});

render();
refreshModel();
refreshStats();
setInterval(refreshStats, 3000);
$('input').focus();
