#!/bin/bash
# SPDX-License-Identifier: MIT
#
# links-agree.sh: the link a card hangs on must not change what the model
# generates. With PCIe and USB cards in one guest (tools/vm-run --transport
# mixed), the same greedy generation runs on the PCIe cards alone, on the
# USB cards alone and on a cascade that crosses both links several times;
# the texts must be equal byte for byte (and not empty). Without both
# kinds of cards every check is reported as SKIP.
#
# Runs inside the guest: tools/vm-run --cards 4 --transport mixed --
#   bash tests/e2e/links-agree.sh
# Prints TAP; exit status 1 when a check failed, 2 when the binary or the
# model is missing.
#
# Environment: RK1828_MODEL (default <repo>/../shared/models/stories260K.gguf),
# RK1828_LLM (default <repo>/build/rk1828-llm), N_PREDICT (default 60).
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
n_predict=${N_PREDICT:-60}
prompts=("Once upon a time" "The little dog")

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
tmp=$(mktemp -d /tmp/links-agree.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Card indices (rk1828-llm order) per link, from rk1828-llm info.
info=$("$llm" info 2>/dev/null)
idx_of() {
	echo "$info" | awk -v l="link $1 " 'index($0, l) { sub(/^card/, "", $1); sub(/:$/, "", $1); print $1 }'
}
pcie=($(idx_of pcie))
usb=($(idx_of usb))
all=($(echo "$info" | awk '/^card/ { sub(/^card/, "", $1); sub(/:$/, "", $1); print $1 }'))
list() { local IFS=,; echo "$*"; }

n=0
failed=0
echo "1..$(( ${#prompts[@]} * 3 ))"
for pi in "${!prompts[@]}"; do
	p=${prompts[$pi]}
	names=("on the PCIe cards ($(list "${pcie[@]}"))" "on the USB cards ($(list "${usb[@]}"))"
	       "on a cascade over both links ($(list "${all[@]}"))")
	if [ ${#pcie[@]} -eq 0 ] || [ ${#usb[@]} -eq 0 ]; then
		for name in "${names[@]}"; do
			n=$((n + 1))
			echo "ok $n - prompt $pi: $name # SKIP needs PCIe and USB cards"
		done
		continue
	fi
	cards=("$(list "${pcie[@]}")" "$(list "${usb[@]}")" "$(list "${all[@]}")")
	for k in 0 1 2; do
		out=$tmp/$pi-$k.txt
		n=$((n + 1))
		if ! "$llm" run -m "$model" -p "$p" -n "$n_predict" --temp 0 \
			--cards "${cards[$k]}" --bucket 4 >"$out" 2>"$tmp/err"; then
			echo "not ok $n - prompt $pi: ${names[$k]}: run failed"
			sed 's/^/# /' "$tmp/err" | head -n 10
			failed=$((failed + 1))
		elif [ ! -s "$out" ]; then
			echo "not ok $n - prompt $pi: ${names[$k]}: no text"
			failed=$((failed + 1))
		elif [ "$k" = 0 ]; then
			echo "ok $n - prompt $pi: ${names[$k]} generates $(wc -c <"$out") bytes"
		elif cmp -s "$tmp/$pi-0.txt" "$out"; then
			echo "ok $n - prompt $pi: ${names[$k]} generates the same text as on PCIe"
		else
			echo "not ok $n - prompt $pi: ${names[$k]} differs from the PCIe text"
			diff <(fold -w 60 "$tmp/$pi-0.txt") <(fold -w 60 "$out") | sed 's/^/# /' | head -n 10
			failed=$((failed + 1))
		fi
	done
done
[ "$failed" -eq 0 ]
