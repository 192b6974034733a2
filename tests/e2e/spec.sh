#!/bin/bash
# SPDX-License-Identifier: MIT
#
# spec.sh: speculative decoding through the real driver: greedy ids of
# `rk1828-llm run --spec ngram` equal those without, on stories260K
# (drafts accepted and rejected) and the synthetic qwen35 hybrid
# (build/synth/qwen35-engine.gguf: Gated DeltaNet state on the cards),
# and `--spec mtp` on the hybrid with an MTP block
# (build/synth/qwen35-mtp.gguf: the final hidden state back from the last
# card through the driver, RK1828_PROG_F_HIDDEN), for --cards 1, 2 and 4 and --draft-max 4 and 8; then `bench --spec
# ngram --trace` on 2 cards: its trace's "verify pass" events carry k in
# 1..--draft-max adding up to the drafted count bench prints.
#
# Runs inside the guest (tools/vm-run --cards 4 --transport pcie -- bash
# tests/e2e/spec.sh); card counts above the accel nodes present are SKIP.
# Prints TAP; exit 1 when a check failed, 2 when the binary or a model is
# missing. RK1828_LLM (default <repo>/build/rk1828-llm; the host's mock
# build/tests/host_story runs it without a guest), RK1828_MODEL.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
story=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
hybrid=$root/build/synth/qwen35-engine.gguf
mtp=$root/build/synth/qwen35-mtp.gguf
p_story="Once upon a time, there was a little girl named Lily. She liked to play. Once upon a time, there was a little boy named Tom. He liked to"
p_hybrid="abbcabbbdabbbbeab"
p_mtp=$p_hybrid

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$story" ] && [ -r "$hybrid" ] && [ -r "$mtp" ] ||
	{ echo "Bail out! $story, $hybrid or $mtp missing (make synth-models)"; exit 2; }
have=$(ls /dev/accel 2>/dev/null | grep -c '^accel' || true)
[ "$llm" != "${llm%host_story}" ] && have=4	# the mock's cards
tmp=$(mktemp -d /tmp/spec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

report() {	# report OK NAME [FILE]: one TAP line, FILE's tail as comments when not OK
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
		[ -n "${3:-}" ] && tail -n 5 "$3" | sed 's/^/# /'
	fi
}

# cmp_ids A B MIN_REJECTED: the same ids, B drafted, at least MIN_REJECTED rejected.
cmp_ids() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
s = b['stats']
rej = s['draft_n'] - s['draft_n_accepted']
ok = a['ids'] == b['ids'] and len(a['ids']) == 48 and s['draft_n'] > 0 and \
     a['stats']['draft_n'] == 0 and rej >= int(sys.argv[3])
print('# %d ids, %d drafted, %d accepted' % (len(b['ids']), s['draft_n'], s['draft_n_accepted']))
sys.exit(0 if ok else 1)
PY
}

for m in story hybrid mtp; do
	model=${!m} pv=p_$m drafter=ngram
	[ "$m" = mtp ] && drafter=mtp
	for c in 1 2 4; do
		if [ "$c" -gt "$have" ]; then
			n=$((n + 1)); echo "ok $n - $m --cards $c # SKIP $have cards"; continue
		fi
		"$llm" run -m "$model" -p "${!pv}" -n 48 --temp 0 --ignore-eos --json --cards "$c" \
			>"$tmp/base.json" 2>"$tmp/err" || { report 0 "$m --cards $c: run" "$tmp/err"; continue; }
		for k in 4 8; do
			"$llm" run -m "$model" -p "${!pv}" -n 48 --temp 0 --ignore-eos --json --cards "$c" \
				--spec "$drafter" --draft-max "$k" >"$tmp/spec.json" 2>"$tmp/err"
			[ "$m" = story ] && min=1 || min=0
			cmp_ids "$tmp/base.json" "$tmp/spec.json" "$min" >"$tmp/cmp" 2>&1
			report $(( $? == 0 )) "$m --cards $c --spec $drafter --draft-max $k: greedy ids identical" "$tmp/err"
			cat "$tmp/cmp"
		done
	done
done

if [ "$have" -ge 2 ]; then
	"$llm" bench -m "$story" --cards 2 -p 32 -n 64 -r 2 --spec ngram --draft-max 4 \
		--trace "$tmp/trace.json" >"$tmp/bench.txt" 2>"$tmp/err"
	python3 - "$tmp/bench.txt" "$tmp/trace.json" <<'PY' >"$tmp/cmp" 2>&1
import json, re, sys
m = re.search(r'\(ngram, --draft-max 4\): (\d+) drafted', open(sys.argv[1]).read())
v = [e for e in json.load(open(sys.argv[2]))['traceEvents'] if e.get('name') == 'verify pass']
ks = [e['args']['k'] for e in v]
print('# %d verify passes, k sum %d, bench drafted %s' % (len(v), sum(ks), m and m.group(1)))
sys.exit(0 if m and v and sum(ks) == int(m.group(1)) and all(1 <= k <= 4 for k in ks) else 1)
PY
	report $(( $? == 0 )) "bench --spec ngram --trace: verify passes with k adding up to the drafts" "$tmp/err"
	cat "$tmp/cmp"
else
	n=$((n + 1)); echo "ok $n - bench --spec ngram --trace # SKIP $have cards"
fi
echo "1..$n"
exit $failed
