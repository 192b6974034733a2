#!/bin/bash
# SPDX-License-Identifier: MIT
#
# logits-vs-reference.sh: the logits the cards compute match a scalar,
# single-threaded reference forward pass (tests/lib/ref_forward.c, which
# shares no code with the emulator's kernels) within 1e-4 relative.
#
# Runs inside the guest (tools/vm-run --cards 4 -- bash tests/e2e/logits-vs-reference.sh).
# For each prompt and card count, `rk1828-llm run --temp 0 -n 1
# --dump-logits FILE` writes the prompt tokens and the logits after the
# last one; `build/tests/ref_check MODEL FILE` recomputes and compares
# them (exit 0 when max|a-b| / max|b| <= 1e-4). Card counts above the
# number of accel nodes present are reported as SKIP. Prints TAP; exit
# status 1 when any check failed, 2 when a binary or the model is missing.
#
# Environment: RK1828_MODEL (default <repo>/../shared/models/stories260K.gguf),
# RK1828_LLM (default <repo>/build/rk1828-llm).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
ref_check=$root/build/tests/ref_check
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
configs=("1 1" "2 1" "2 4" "3 16" "4 4")	# "cards bucket"
prompts=(
	"Once upon a time"
	"The cat sat on the"
	"Tom and his mom went to the park. They saw a big tree with many birds in it. Tom looked up and said"
)

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -x "$ref_check" ] || { echo "Bail out! $ref_check not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
have=$(ls /dev/accel 2>/dev/null | grep -c '^accel' || true)
tmp=$(mktemp -d /tmp/logits.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
echo "1..$(( ${#prompts[@]} * ${#configs[@]} ))"
for pi in "${!prompts[@]}"; do
	p=${prompts[$pi]}
	for cfg in "${configs[@]}"; do
		read -r c b <<<"$cfg"
		n=$((n + 1))
		name="prompt $pi: logits on --cards $c --bucket $b match the scalar reference"
		if [ "$c" -gt "$have" ]; then
			echo "ok $n - $name # SKIP only $have cards"
			continue
		fi
		dump=$tmp/logits-$pi-$c-$b.bin
		if ! "$llm" run -m "$model" -p "$p" -n 1 --temp 0 --cards "$c" \
			--bucket "$b" --dump-logits "$dump" >"$tmp/out" 2>"$tmp/err"; then
			echo "not ok $n - $name (rk1828-llm failed)"
			sed 's/^/# /' "$tmp/err" | head -n 15
			failed=$((failed + 1))
		elif "$ref_check" "$model" "$dump" >"$tmp/check" 2>&1; then
			echo "ok $n - $name"
			sed 's/^/# /' "$tmp/check" | head -n 3
		else
			echo "not ok $n - $name"
			sed 's/^/# /' "$tmp/check" | head -n 15
			failed=$((failed + 1))
		fi
	done
done
[ "$failed" -eq 0 ]
