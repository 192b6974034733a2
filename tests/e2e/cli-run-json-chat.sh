#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cli-run-json-chat.sh: rk1828-llm run --json, --ignore-eos, --parse-special,
# --chat and the interactive chat, on 2 cards with stories260K (a model
# without a chat template, so --chat and chat use the plain rendering).
#
# Runs inside the guest (tools/vm-run --cards 2 -- bash tests/e2e/cli-run-json-chat.sh).
# Checks:
#  - run --json prints one JSON object whose prompt_ids are what `tokenize
#    --ids` gives, whose text is the plain run's output, and whose ids and
#    stats.generated_tokens agree;
#  - --ignore-eos gives the same -n tokens (finish "length");
#  - --parse-special makes "</s>" in the prompt the EOS token, without it
#    "</s>" is text;
#  - run --chat of one user message is the plain run (plain template);
#  - chat reads two messages from stdin, answers the first exactly as run
#    does, keeps the history (the second prompt is longer) and exits 0 at
#    end of input.
# Prints TAP; exit status 1 when a check failed, 2 when something is missing.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
command -v python3 >/dev/null || { echo "Bail out! python3 missing"; exit 2; }
tmp=$(mktemp -d /tmp/clijson.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
echo "1..9"

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

# jq-like checks with python3: json FILE EXPR -> prints EXPR's value.
json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

p="Once upon a time"
common=(-m "$model" --cards 2 --temp 0)

"$llm" run "${common[@]}" -p "$p" -n 24 >"$tmp/plain.txt" 2>"$tmp/plain.err"
"$llm" run "${common[@]}" -p "$p" -n 24 --json >"$tmp/run.json" 2>"$tmp/run.err"
"$llm" tokenize -m "$model" -p "$p" --ids >"$tmp/ids.txt" 2>&1
ok=0
if [ "$(wc -l <"$tmp/run.json")" = 1 ] &&
   [ "$(json "$tmp/run.json" 'd["prompt_ids"]')" = "$(cat "$tmp/ids.txt")" ] &&
   [ "$(json "$tmp/run.json" 'len(d["ids"]) == d["stats"]["generated_tokens"] > 0')" = True ]; then
	ok=1
fi
report $ok "run --json: one object; prompt_ids = tokenize --ids; ids match generated_tokens" \
	"$tmp/run.json" "$tmp/run.err" "$tmp/ids.txt"
python3 -c 'import json,sys; sys.stdout.write(json.load(open(sys.argv[1]))["text"] + "\n")' \
	"$tmp/run.json" >"$tmp/json-text.txt" 2>/dev/null
cmp -s "$tmp/json-text.txt" "$tmp/plain.txt" && ok=1 || ok=0
report $ok "run --json: text is the streamed output of the same run" "$tmp/json-text.txt" "$tmp/plain.txt"
[ "$(json "$tmp/run.json" 'sorted(d["stats"].keys()) == sorted(["prompt_tokens","generated_tokens","finish","ttft_ms","tpot_ms","prefill_tok_s","decode_tok_s","plan"]) and d["stats"]["prompt_tokens"] == len(d["prompt_ids"])')" = True ] && ok=1 || ok=0
report $ok "run --json: stats has prompt_tokens, generated_tokens, finish, TTFT/TPOT, rates, plan" "$tmp/run.json"

# (stories260K practically never samples EOS; tests/unit/test_engine_tok
# checks stopping at EOS/<|im_end|> and going past them on mock cards.)
"$llm" run "${common[@]}" -p "$p" -n 24 --ignore-eos --json >"$tmp/ign.json" 2>"$tmp/ign.err"
python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(0 if a["ids"] == b["ids"] and a["stats"]["finish"] == "length" else 1)' \
	"$tmp/ign.json" "$tmp/run.json" && ok=1 || ok=0
report $ok "run --ignore-eos -n 24: the same 24 tokens, finish length" "$tmp/ign.err" "$tmp/ign.json"

"$llm" run "${common[@]}" -p "</s>" -n 1 --parse-special --json >"$tmp/ps.json" 2>"$tmp/ps.err"
"$llm" run "${common[@]}" -p "</s>" -n 1 --json >"$tmp/nps.json" 2>>"$tmp/ps.err"
[ "$(json "$tmp/ps.json" 'd["prompt_ids"] == [1, 2]')" = True ] &&
[ "$(json "$tmp/nps.json" 'len(d["prompt_ids"]) > 2 and 2 not in d["prompt_ids"]')" = True ] && ok=1 || ok=0
report $ok "run --parse-special: '</s>' is EOS; without it, text" "$tmp/ps.err" "$tmp/ps.json" "$tmp/nps.json"

"$llm" run "${common[@]}" -p "$p" -n 24 --chat >"$tmp/chat1.txt" 2>"$tmp/chat1.err"
cmp -s "$tmp/chat1.txt" "$tmp/plain.txt" && grep -q 'no chat template' "$tmp/chat1.err" && ok=1 || ok=0
report $ok "run --chat without a template: the plain run, with a note" "$tmp/chat1.err" "$tmp/chat1.txt"

printf '%s\n%s\n' "$p" "The dog" | "$llm" chat "${common[@]}" -n 24 -v -v \
	>"$tmp/chat.txt" 2>"$tmp/chat.err"
rc=$?
report $([ $rc = 0 ] && echo 1 || echo 0) "chat: two messages from stdin, exit 0 at end of input" "$tmp/chat.err"
# The reply as printed: the run's text without its trailing whitespace
# (the reply parser drops it), then a newline.
python3 -c 'import sys; a=open(sys.argv[1]).read(); b=open(sys.argv[2]).read().rstrip(); sys.exit(0 if a.startswith(b + "\n") else 1)' \
	"$tmp/chat.txt" "$tmp/plain.txt" && ok=1 || ok=0
report $ok "chat: the first reply is the run's output" "$tmp/chat.txt" "$tmp/plain.txt"
# -v -v prints each prompt: the second holds the first exchange, then the new message.
first=$(grep -c '^prompt (plain): Once upon a time$' "$tmp/chat.err")
second=$(grep -c '^The dog$' "$tmp/chat.err")
[ "$first" = 2 ] && [ "$second" = 1 ] && ok=1 || ok=0
report $ok "chat: the second prompt carries the first message, the reply and the new one" "$tmp/chat.err"

[ $failed -eq 0 ]
