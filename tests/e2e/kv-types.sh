#!/bin/bash
# SPDX-License-Identifier: MIT
#
# kv-types.sh: --kv-type end to end on emulated cards through the driver
# (issue 21). Runs inside the guest (tools/vm-run --cards 2 -- bash
# tests/e2e/kv-types.sh). For each prompt, greedy `rk1828-llm run --temp 0
# -n 32 --cards 2` with --kv-type f32, f16, q8_0 and q4_0 at --bucket 16,
# and q8_0 at --bucket 1 (token-by-token prefill):
# - every run succeeds and its plan line says the type (-v: "KV q8_0");
# - f16 K/V gives f32 K/V's text byte for byte;
# - q8_0 at bucket 1 gives q8_0 at bucket 16's text (decode and prefill
#   read the same stored rows);
# - the first-token agreement of q8_0 and q4_0 with f32 is printed.
# Prints TAP; exit status 1 when a check failed, 2 when the binary or the
# model is missing. Environment: RK1828_MODEL (default
# <repo>/../shared/models/stories260K.gguf), RK1828_LLM.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
prompts=("Once upon a time" "The little dog" "Lily wanted to play with her ball because")

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
tmp=$(mktemp -d /tmp/kvtypes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

report() {	# report OK NAME
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}

for i in "${!prompts[@]}"; do
	p=${prompts[$i]}
	for t in f32 f16 q8_0 q4_0; do
		"$llm" run -v -m "$model" -p "$p" -n 32 --temp 0 --cards 2 --bucket 16 --kv-type $t \
			>"$tmp/$i.$t" 2>"$tmp/$i.$t.err"
		rc=$?
		ok=0
		[ $rc -eq 0 ] && [ -s "$tmp/$i.$t" ] && grep -q "KV $t" "$tmp/$i.$t.err" && ok=1
		report $ok "prompt $i: --kv-type $t runs and the engine says KV $t (rc $rc)"
		[ $ok = 1 ] || sed 's/^/# /' "$tmp/$i.$t.err" | tail -5
	done
	"$llm" run -m "$model" -p "$p" -n 32 --temp 0 --cards 2 --bucket 1 --kv-type q8_0 \
		>"$tmp/$i.q8b1" 2>"$tmp/$i.q8b1.err"
	cmp -s "$tmp/$i.f32" "$tmp/$i.f16"
	report $(( $? == 0 )) "prompt $i: f16 K/V gives f32 K/V's greedy text"
	cmp -s "$tmp/$i.q8_0" "$tmp/$i.q8b1"
	report $(( $? == 0 )) "prompt $i: q8_0 K/V: bucket 1 gives bucket 16's greedy text"
	for t in q8_0 q4_0; do
		cmp -s "$tmp/$i.f32" "$tmp/$i.$t" && s="the same as" || s="not"
		echo "# prompt $i: $t text $s f32's: $(head -c 120 "$tmp/$i.$t" | tr '\n' ' ')"
	done
	echo "# prompt $i: f32 text: $(head -c 120 "$tmp/$i.f32" | tr '\n' ' ')"
done
echo "1..$n"
[ $failed -eq 0 ]
