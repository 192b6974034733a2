#!/bin/bash
# SPDX-License-Identifier: MIT
#
# qwen-vs-llama.sh: the synthetic Qwen-family models (qwen2, qwen3,
# qwen35; F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K_M, Q5_K,
# Q6_K) run on the cards and give llama.cpp's answers: their committed
# reference vectors (tests/vectors/qwen/*.ref, tools/gen-ref-vectors).
#
# Runs inside the guest, in tests/run-all's PCIe boot (tools/vm-run --cards 4
# --transport pcie --disk build/synth.img; tools/mk-disk-image makes it).
# build/tests/qwen_check has the checks and their bounds:
# - every model with a real Qwen vocabulary on 2 cards in micro-batches of
#   7 tokens; the F32 ones (qwen2, qwen3, qwen35) with their greedy
#   continuation decoded one token a job and teacher-forced top-1
#   (--decode --forced), the other types against the dequantized
#   reference with teacher-forced top-1;
# - each architecture's F32 model with the 512-token placeholder
#   vocabulary (ARCH-f32-v512: the same kinds of blocks, a tenth of the
#   bytes to upload) on 1, 2, 3 and 4 cards, each load reused for
#   micro-batches of 1, 7 and 32 tokens: prompt logits, greedy tokens and
#   final logits.
# Needs the models in build/synth (make synth-models) and, for the
# quantized ones, the dequantized reference logits test_qwen_ref wrote
# there (build/synth/NAME.deq), or the same files on the disk of
# $RK1828_VM_DISK. The numerics do not depend on the link, and jobs are
# fastest over PCIe (the card DMAs from the guest's pages), so it runs on
# PCIe cards only (RK1828_TRANSPORT, which vm-run sets, naming another
# link: one SKIP line). Prints TAP; exit
# status 1 when a check failed, 2 when something is missing.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/build/tests/qwen_check
vec=$root/tests/vectors/qwen
synth=$root/build/synth
# build/synth as an ext4 disk (tools/mk-disk-image, tools/vm-run --disk):
# 2.2 GB of models read at disk speed instead of the 9p root's ~4.5 MB/s.
if [ -n "${RK1828_VM_DISK:-}" ] && [ -r "$RK1828_VM_DISK/qwen2-f32.gguf" ]; then
	synth=$RK1828_VM_DISK
fi

case ${RK1828_TRANSPORT:-pcie} in
pcie) ;;
*) echo "ok 1 - qwen-vs-llama # SKIP runs in the PCIe boot only (the cards' numerics do not depend on the link)"; exit 0 ;;
esac
[ -x "$check" ] || { echo "Bail out! $check not built"; exit 2; }
ls "$vec"/*.ref >/dev/null 2>&1 || { echo "Bail out! no vectors in $vec"; exit 2; }
fail=0
t0=$SECONDS

# check NAME CARDS BUCKET... [OPTIONS]: one qwen_check run, timed.
check() {
	local name=$1 t=$SECONDS
	shift
	echo "# --- qwen_check $name $*"
	"$check" "$vec/$name.ref" "$synth/$name.gguf" "$@" || fail=1
	echo "# qwen_check $name $*: $((SECONDS - t)) s"
}

for ref in "$vec"/*.ref; do
	name=$(basename "$ref" .ref)
	if [ ! -r "$synth/$name.gguf" ]; then
		echo "not ok 1 - $name: $synth/$name.gguf missing (make synth-models)"
		fail=1
		continue
	fi
	case $name in
	*-f32-v512)
		for c in 1 2 3 4; do
			check "$name" "$c" 1 7 32
		done ;;
	*-f32) check "$name" 2 7 --decode --forced ;;
	*) check "$name" 2 7 --deq "$synth/$name.deq" ;;
	esac
done
# The user-facing CLI on one real-vocabulary model (qwen35 F32, so that
# greedy tokens are llama.cpp's exactly): `rk1828-llm tokenize` gives
# llama.cpp's ids of every prompt of cases.txt and of the rendered chat
# prompt (special tokens parsed), and `rk1828-llm run --chat --json` on 2
# cards renders the model's template for the message of chat.txt into
# llama.cpp's prompt ids and generates its 12 greedy tokens
# (tests/vectors/qwen/qwen35-f32.chat, written by tools/gen-ref-vectors).
cli_checks() {
	local llm=$root/build/rk1828-llm name=qwen35-f32 n=0 t=$SECONDS
	local model=$synth/$name.gguf ref=$vec/$name.ref chat=$vec/$name.chat
	local i line text want got out msg k l key vk tmp

	tmp=$(mktemp -d)

	# field FILE KEY: the rest of the first line "KEY ...".
	field() { sed -n "s/^$2 //p" "$1" | head -n 1; }
	# unescape TEXT: cases.txt's and chat_text's \n and \\ into $text
	# (a variable, not $(...), which would drop the chat prompt's final
	# newline).
	unescape() {
		text=${1//\\\\/$'\001'}
		text=${text//\\n/$'\n'}
		text=${text//$'\001'/\\}
	}
	# ids: "[1, 2, 3]" or JSON arrays as "1 2 3".
	ids() { tr -d '[],' | tr -s ' ' | sed 's/^ //; s/ $//'; }
	# same_ids WHAT WANT GOT: one TAP line, ok when llama.cpp's ids WANT
	# are there and ours GOT equal them; else both are shown.
	same_ids() {
		n=$((n + 1))
		if [ -n "$2" ] && [ "$3" = "$2" ]; then
			echo "ok $n - cli: $1 ($(wc -w <<<"$2") tokens)"
			return 0
		fi
		echo "not ok $n - cli: $1"
		echo "#   ours:      $3"; echo "#   llama.cpp: $2"; fail=1
		return 1
	}
	n=$((n + 1))
	if [ "$(field "$chat" sha256)" = "$(field "$ref" sha256)" ]; then
		echo "ok $n - cli: $name.chat and $name.ref describe the same model (sha256)"
	else
		echo "not ok $n - cli: $name.chat and $name.ref describe the same model (regenerate: tools/gen-ref-vectors --only $name)"
		fail=1
	fi
	i=0
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		unescape "$line"
		want=$(awk -v c="$i" '$1 == "case" { k = $2 } $1 == "prompt_ids" && k == c { $1 = ""; print substr($0, 2); exit }' "$ref")
		got=$("$llm" tokenize -m "$model" -p "$text" --ids 2>&1 | ids)
		same_ids "tokenize gives llama.cpp's ids of case $i of cases.txt" "$want" "$got"
		i=$((i + 1))
	done <"$vec/cases.txt"
	unescape "$(field "$chat" chat_text)"
	want=$(field "$chat" chat_prompt_ids)
	got=$("$llm" tokenize -m "$model" -p "$text" --ids --parse-special 2>&1 | ids)
	same_ids "tokenize --parse-special gives llama.cpp's ids of the rendered chat prompt" "$want" "$got"
	msg=$(field "$chat" message)
	out=$("$llm" run -m "$model" -p "$msg" --chat --json -n "$(wc -w <<<"$(field "$chat" chat_gen_ids)")" \
		--temp 0 --ignore-eos --cards 2 --bucket 32 --ctx 256 2>"$tmp/run.err")
	# Line 1 the prompt ids, line 2 the generated ids of the JSON object.
	python3 -c 'import json, sys; o = json.load(sys.stdin); print(*o["prompt_ids"]); print(*o["ids"])' \
		<<<"$out" >"$tmp/ids" 2>/dev/null
	for k in 1:prompt_ids:chat_prompt_ids 2:ids:chat_gen_ids; do
		IFS=: read -r l key vk <<<"$k"
		want=$(field "$chat" "$vk")
		got=$(sed -n "${l}p" "$tmp/ids")
		same_ids "run --chat --json on 2 cards: its $key are llama.cpp's" "$want" "$got" || {
			echo "#   output: ${out:0:300}"; tail -n 3 "$tmp/run.err" | sed 's/^/#   /'
		}
	done
	rm -rf "$tmp"
	echo "# cli checks: $((SECONDS - t)) s"
}
if [ -r "$vec/qwen35-f32.chat" ] && [ -r "$synth/qwen35-f32.gguf" ]; then
	cli_checks
else
	echo "not ok 1 - cli: $vec/qwen35-f32.chat and $synth/qwen35-f32.gguf present"
	fail=1
fi
echo "# qwen-vs-llama: $((SECONDS - t0)) s"
exit $fail
