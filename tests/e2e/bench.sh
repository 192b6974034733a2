#!/bin/bash
# SPDX-License-Identifier: MIT
#
# bench.sh: rk1828-llm bench on two real (emulated) cards in the guest:
# the table has a row per test (pp16, pp40, tg8, tg8 x2) with measured
# and predicted figures (the predicted TTFT of the longer prompt above the
# shorter one; measured times are not compared, their order is noise;
# rate = tokens / time) on the link of the cards (rk1828-llm info's, the
# prediction's link when no --link is given), the host-time and
# resident-set notes, and --trace
# writes a Chrome trace-event JSON with a named process per card and the
# host, three jobs (input COPY, EXEC, output COPY) per micro-batch and
# card, no two EXECs of one card overlapping, every job within its
# micro-batch's submit-to-logits span, and the prompts' micro-batches in
# buckets (ceil(16/8) + ceil(40/8) per repetition). Prints TAP; exit 1
# when a check failed.
root=$(cd "$(dirname "$0")/../.." && pwd)
export RK1828_MODEL=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
tmp=$(mktemp -d /tmp/bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$root/build/rk1828-llm" bench -m "$RK1828_MODEL" --cards 2 --ctx 128 --bucket 8 \
	-p 16,40 -n 8 -r 2 --sessions 2 --trace "$tmp/trace.json" >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out"
# The links of the two cards bench ran on, "usb", "pcie" or "pcie usb".
links=$("$root/build/rk1828-llm" info | head -n 2 | grep -o 'link [a-z]*' | cut -d' ' -f2 | sort -u | tr '\n' ' ')
python3 - "$tmp" "$rc" "$links" <<'PYEOF'
import json, re, sys
d, rc, links = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
out = open(d + '/out').read()
n = 0
fails = 0
def t(name, cond):
    global n, fails
    n += 1
    print(('ok %d - %s' if cond else 'not ok %d - %s') % (n, name))
    fails += not cond

t('bench exits 0', rc == 0)
rows = {}
for line in out.splitlines():
    c = [x.strip() for x in line.strip().strip('|').split('|')]
    if len(c) == 10 and c[4] in ('pp16', 'pp40', 'tg8', 'tg8 x2'):
        rows[c[4]] = c
t('the table has the rows pp16, pp40, tg8, tg8 x2', sorted(rows) == ['pp16', 'pp40', 'tg8', 'tg8 x2'])
def num(s):
    return float(s.split()[0])
def checks():
    """(name, condition) pairs on the table (columns: 5 ms, 6 pred. ms,
    7 t/s, 8 pred. t/s). Measured durations are never compared with each
    other: in a TCG guest on a shared machine their order is noise (CI saw
    pp40 take 32.6 ms and pp16 35.4 ms). The deterministic prediction is."""
    try:
        pos = all(c[2] == '2' and num(c[6]) > 0 and num(c[8]) > 0 and num(c[7]) > 0 for c in rows.values()) \
            and all(num(rows[k][5]) > 0 for k in ('pp16', 'pp40', 'tg8'))
        longer = num(rows['pp40'][6]) > num(rows['pp16'][6])
        # predicted rate and time are one figure: pp: tokens / TTFT, tg: 1000 / TPOT
        tg = abs(num(rows['tg8'][8]) - 1000 / num(rows['tg8'][6])) < 0.02 * num(rows['tg8'][8])
        pp = abs(num(rows['pp40'][8]) * num(rows['pp40'][6]) / 1000 - 40) < 1
    except (ValueError, IndexError, KeyError):
        pos = longer = tg = pp = False
    return [('every measured and predicted figure is positive, on 2 cards', pos),
            ('the predicted TTFT of pp40 is above that of pp16', longer),
            ('tg8: predicted t/s = 1000 / predicted TPOT', tg),
            ('pp40: predicted t/s x predicted ms = 40 tokens', pp)]
for name, cond in checks():
    t(name, cond)
t('notes: host time per decode step, overlap, peak resident set',
  re.search(r'^host time per decode step \(runtime \+ driver, measured\): \d+ us = [\d.]+ % of the modelled card time', out, re.M) is not None and
  re.search(r'^copy/compute overlap \(pp40\): \d+ %', out, re.M) is not None and
  re.search(r'^peak resident set of rk1828-llm: [\d.]+ MiB', out, re.M) is not None)
try:
    tr = json.load(open(d + '/trace.json'))
    ev = tr['traceEvents']
except (OSError, ValueError, KeyError):
    ev = []
t('--trace writes a trace-event JSON', len(ev) > 0)
procs = {e['pid']: e['args']['name'] for e in ev if e.get('ph') == 'M' and e['name'] == 'process_name'}
t('a process per card (its blocks named) and one for the host',
  len(procs) == 3 and re.match(r'card\d \(/dev/accel/accel\d\): blk 0-\d+$', procs.get(0, '')) is not None and
  procs.get(1, '').endswith('+ output') and procs.get(2) == 'host')
X = [e for e in ev if e.get('ph') == 'X']
ex = [e for e in X if e['name'] == 'EXEC']
cin = [e for e in X if e['name'].startswith('IN ')]
cout = [e for e in X if e['name'].startswith('OUT ')]
mb = [e for e in X if e['pid'] == 2]
# per repetition: 2 + 5 prompt micro-batches; tg: 1 + 8 steps
want = 2 * (2 + 5) + 2 * (1 + 8)
t('three jobs per micro-batch and card: %d micro-batches of the pp and tg tests' % want,
  len(mb) == want and len(ex) == 2 * want and len(cin) == 2 * want and len(cout) == 2 * want)
okq = True
for pid in (0, 1):
    s = sorted((e['ts'], e['ts'] + e['dur']) for e in ex if e['pid'] == pid)
    okq &= all(a[1] <= b[0] + 1e-3 for a, b in zip(s, s[1:]))
t("no two EXECs of one card overlap", okq and all(e['dur'] >= 0 for e in X))
span = {}
for e in mb:
    span[e['args']['micro-batch']] = (e['ts'], e['ts'] + e['dur'])
okspan = all(e['args']['micro-batch'] in span and
             span[e['args']['micro-batch']][0] - 1e-3 <= e['ts'] and
             e['ts'] + e['dur'] <= span[e['args']['micro-batch']][1] + 1e-3 for e in X if e['pid'] != 2)
t("every job lies within its micro-batch's submit-to-logits span", okspan)
toks = sorted(e['args']['tokens'] for e in ex if e['pid'] == 0)
t('prompt micro-batches are buckets of 8 (16 = 8 + 8, 40 = 5 x 8), decode steps one token',
  toks.count(8) == 2 * (2 + 5) and toks.count(1) == 2 * (1 + 8))
print('1..%d' % n)
sys.exit(1 if fails else 0)
PYEOF
prc=$?
[ $rc -eq 0 ] || sed 's/^/# stderr: /' "$tmp/err"
exit $prc
