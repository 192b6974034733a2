#!/bin/bash
# SPDX-License-Identifier: MIT
#
# greedy-consistency.sh: greedy output must not depend on how the model is
# split across cards or on the prefill bucket size.
#
# Runs inside the guest (tools/vm-run --cards 4 -- bash tests/e2e/greedy-consistency.sh).
# For every prompt, `rk1828-llm run --temp 0 -n 40` is run with --cards 1..4
# and --bucket 1, 4 and 16; every generated text must equal the one of
# --cards 1 --bucket 1 byte for byte (and that one must not be empty).
# Card counts above the number of accel nodes present are reported as
# SKIP. Prints TAP ("ok N - name" / "not ok N - name"); exit status 1 when
# any check failed, 2 when the binary or the model is missing.
#
# The runs are independent processes (each its own card contexts), so
# they run JOBS at a time (default 3): the cards serve several contexts,
# and a run mostly waits for them. The checks then compare in order.
#
# Environment: RK1828_MODEL (default <repo>/../shared/models/stories260K.gguf),
# RK1828_LLM (default <repo>/build/rk1828-llm), N_PREDICT (default 40),
# JOBS (default 3).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
n_predict=${N_PREDICT:-40}
jobs=${JOBS:-3}
cards_list=(1 2 3 4)
buckets=(1 4 16)
prompts=(
	"Once upon a time"
	"The little dog"
	"Lily wanted to play with her ball because"
	"One day, a big red"
	"Tom and his mom went to the park. They saw a big tree with many birds in it. Tom looked up and said"
)

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
have=$(ls /dev/accel 2>/dev/null | grep -c '^accel' || true)
tmp=$(mktemp -d /tmp/greedy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
echo "1..$(( ${#prompts[@]} * (1 + ${#cards_list[@]} * ${#buckets[@]} - 1) ))"

# gen OUT ERR CARDS BUCKET PROMPT: one greedy run; returns its exit status.
gen() {
	"$llm" run -m "$model" -p "$5" -n "$n_predict" --temp 0 \
		--cards "$3" --bucket "$4" >"$1" 2>"$2"
}

# report OK NAME [DETAIL FILE...]: one TAP line, details as comments.
report() {
	local ok=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" = 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
		local f
		for f in "$@"; do
			[ -s "$f" ] && sed 's/^/# /' "$f" | head -n 15
		done
	fi
}

# Phase 1: every run, JOBS at a time; each leaves OUT, ERR and OUT.rc.
running=0
for pi in "${!prompts[@]}"; do
	for c in "${cards_list[@]}"; do
		[ "$c" -gt "$have" ] && continue
		for b in "${buckets[@]}"; do
			out=$tmp/out$pi-$c-$b.txt
			(gen "$out" "$tmp/out$pi-$c-$b.err" "$c" "$b" "${prompts[$pi]}"; echo $? >"$out.rc") &
			running=$((running + 1))
			if [ "$running" -ge "$jobs" ]; then
				wait -n
				running=$((running - 1))
			fi
		done
	done
done
wait

# Phase 2: the checks, in order.
for pi in "${!prompts[@]}"; do
	ref=$tmp/out$pi-1-1.txt
	if [ "$(cat "$ref.rc")" = 0 ] && [ -s "$ref" ]; then
		report 1 "prompt $pi: --cards 1 --bucket 1 generates text ($(wc -c <"$ref") bytes)"
		ref_ok=1
	else
		report 0 "prompt $pi: --cards 1 --bucket 1 generates text" "$tmp/out$pi-1-1.err"
		ref_ok=0
	fi
	for c in "${cards_list[@]}"; do
		for b in "${buckets[@]}"; do
			[ "$c" = 1 ] && [ "$b" = 1 ] && continue
			name="prompt $pi: --cards $c --bucket $b matches --cards 1 --bucket 1"
			if [ "$c" -gt "$have" ]; then
				n=$((n + 1))
				echo "ok $n - $name # SKIP only $have cards"
				continue
			fi
			out=$tmp/out$pi-$c-$b.txt
			err=$tmp/out$pi-$c-$b.err
			if [ "$(cat "$out.rc")" != 0 ]; then
				report 0 "$name (run failed)" "$err"
			elif [ "$ref_ok" = 1 ] && cmp -s "$ref" "$out"; then
				report 1 "$name"
			else
				diff <(fold -w 60 "$ref") <(fold -w 60 "$out") >"$tmp/diff" 2>&1
				report 0 "$name" "$tmp/diff"
			fi
		done
	done
done
[ "$failed" -eq 0 ]
