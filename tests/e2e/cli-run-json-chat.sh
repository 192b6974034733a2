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
#    --ids` gives, whose ids and stats.generated_tokens agree, and whose
#    text is what run --chat streams (the plain rendering of one message);
#  - --ignore-eos gives the same -n tokens (finish "length");
#  - --parse-special makes "</s>" in the prompt the EOS token, without it
#    "</s>" is text;
#  - --logit-bias X-inf of the greedy first token X: the first token is
#    another; --logit-bias Y+100: every token is Y;
#  - run --chat without a template says so;
#  - chat reads two messages from stdin, answers the first exactly as run
#    does, keeps the history (the second prompt is longer) and exits 0 at
#    end of input;
#  - the plan is the one that runs (issue 19): on the hybrid synthetic
#    model (build/synth/qwen35-engine.gguf, state snapshots per slot) the
#    plan `plan` prints for the same cards (plan, bucket, 1 session, 4
#    state snapshots) is the one run --json reports from the engine
#    (engine_get_info()), and so is the one run -v prints.
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

p="Once upon a time"
common=(-m "$model" --cards 2 --temp 0)

# The runs (each is slow under TCG), then one python3 for all the checks.
"$llm" run "${common[@]}" -p "$p" -n 12 --json >"$tmp/run.json" 2>"$tmp/run.err"
"$llm" tokenize -m "$model" -p "$p" --ids >"$tmp/ids.txt" 2>&1
# run --chat of a model without a template: the plain rendering, i.e. the
# same prompt; its streamed text must be the JSON run's text.
"$llm" run "${common[@]}" -p "$p" -n 12 --chat >"$tmp/chat1.txt" 2>"$tmp/chat1.err"
# (stories260K practically never samples EOS; tests/unit/test_engine_tok
# checks stopping at EOS/<|im_end|> and going past them on mock cards.)
"$llm" run "${common[@]}" -p "$p" -n 12 --ignore-eos --json >"$tmp/ign.json" 2>"$tmp/ign.err"
"$llm" run "${common[@]}" -p "</s>" -n 0 --parse-special --json >"$tmp/ps.json" 2>"$tmp/ps.err"
"$llm" run "${common[@]}" -p "</s>" -n 0 --json >"$tmp/nps.json" 2>>"$tmp/ps.err"
# --logit-bias on the greedy run's own ids: ban its first, force its second.
read -r x y < <(python3 -c 'import json,sys; i=json.load(open(sys.argv[1])).get("ids",[0,0]); print(i[0], i[1])' "$tmp/run.json" 2>/dev/null)
"$llm" run "${common[@]}" -p "$p" -n 4 --logit-bias "${x:-0}-inf" --json >"$tmp/ban.json" 2>"$tmp/ban.err"
"$llm" run "${common[@]}" -p "$p" -n 4 --logit-bias "${y:-0}+100" --json >"$tmp/force.json" 2>"$tmp/force.err"
printf '%s\n%s\n' "$p" "The dog" | "$llm" chat "${common[@]}" -n 12 -v -v \
	>"$tmp/chat.txt" 2>"$tmp/chat.err"
echo "$?" >"$tmp/chat.rc"
hyb=${RK1828_HYBRID_MODEL:-$root/build/synth/qwen35-engine.gguf}
if [ -r "$hyb" ]; then
	"$llm" plan -m "$hyb" --cards 2 --ctx 256 >"$tmp/hplan.txt" 2>"$tmp/hplan.err"
	"$llm" run -m "$hyb" --cards 2 --ctx 256 --temp 0 -p "$p" -n 2 --json -v \
		>"$tmp/hrun.json" 2>"$tmp/hrun.err"
fi

python3 - "$tmp" <<'PY'
import json, os, sys

d = sys.argv[1]
n = 0
failed = 0

def read(name):
    try:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""

def load(name):
    try:
        return json.loads(read(name))
    except ValueError:
        return {}

def report(ok, name, *files):
    global n, failed
    n += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, name))
    if not ok:
        failed += 1
        for f in files:
            for line in read(f).splitlines()[:15]:
                print("# " + line)

print("1..12")
run, ign, ps, nps = load("run.json"), load("ign.json"), load("ps.json"), load("nps.json")
st = run.get("stats", {})
report(read("run.json").count("\n") == 1 and str(run.get("prompt_ids")) == read("ids.txt").strip()
       and len(run.get("ids", [])) == st.get("generated_tokens") == 12,
       "run --json: one object; prompt_ids = tokenize --ids; 12 ids = generated_tokens",
       "run.json", "run.err", "ids.txt")
report(sorted(st) == sorted(["prompt_tokens", "generated_tokens", "finish", "ttft_ms", "tpot_ms",
                             "prefill_tok_s", "decode_tok_s", "plan", "draft_n",
                             "draft_n_accepted", "draft_acceptance"])
       and st.get("prompt_tokens") == len(run.get("prompt_ids", []))
       and st.get("draft_n") == 0 and st.get("draft_n_accepted") == 0
       and st.get("draft_acceptance") == 0,
       "run --json: stats has prompt_tokens, generated_tokens, finish, TTFT/TPOT, rates, plan, "
       "no drafts without --spec",
       "run.json")
text = run.get("text")
report(text is not None and read("chat1.txt") == text + "\n",
       "run --json text = the streamed output of run --chat (plain template)", "chat1.txt", "run.json")
report("no chat template" in read("chat1.err"), "run --chat without a template says so", "chat1.err")
report(ign.get("ids") == run.get("ids") and ign.get("stats", {}).get("finish") == "length",
       "run --ignore-eos -n 12: the same 12 tokens, finish length", "ign.err", "ign.json")
report(ps.get("prompt_ids") == [1, 2] and len(nps.get("prompt_ids", [])) > 2
       and 2 not in nps.get("prompt_ids", []),
       "run --parse-special: '</s>' is EOS; without it, text", "ps.err", "ps.json", "nps.json")
ids = run.get("ids", [0, 0])
ban, force = load("ban.json"), load("force.json")
report(len(ban.get("ids", [])) == 4 and ban["ids"][0] != ids[0],
       "run --logit-bias %d-inf: the first token is no longer the greedy %d" % (ids[0], ids[0]),
       "ban.err", "ban.json")
report(force.get("ids") == [ids[1]] * 4,
       "run --logit-bias %d+100: all 4 tokens are %d" % (ids[1], ids[1]), "force.err", "force.json")
report(read("chat.rc").strip() == "0", "chat: two messages from stdin, exit 0 at end of input",
       "chat.err")
# The reply as printed: the run's text without its trailing whitespace
# (the reply parser drops it), then a newline.
report(text is not None and read("chat.txt").startswith(text.rstrip() + "\n"),
       "chat: the first reply is the run's output", "chat.txt", "run.json")
# -v -v prints each prompt: the second holds the first exchange, then the new message.
err = read("chat.err").splitlines()
report(err.count("prompt (plain): Once upon a time") == 2 and err.count("The dog") == 1,
       "chat: the second prompt carries the first message, the reply and the new one", "chat.err")
# The plan printed is the plan that runs: plan's text, run -v and the
# engine's own report in run --json agree on the hybrid model.
if not os.path.exists(os.path.join(d, "hplan.txt")):
    n += 1
    print("ok %d - # SKIP no hybrid model (make synth-models)" % n)
else:
    hp, hr = read("hplan.txt"), load("hrun.json").get("engine", {})
    plan_line = [l[6:] for l in hp.splitlines() if l.startswith("plan: ")]
    report(plan_line and hr.get("plan") == plan_line[0] and hr.get("slots") == 1
           and hr.get("snapshots") == 4 and hr.get("checkpoints") == 4 and hr.get("ctx") == 256
           and ("ctx 256, bucket %d, 1 session, 4 state snapshots" % hr.get("bucket", -1)) in hp
           and ("bucket %d, 1 slot, 4 state snapshots; plan %s" % (hr.get("bucket", -1), hr.get("plan")))
           in read("hrun.err"),
           "hybrid model: the plan `plan` prints (bucket, 1 session, 4 snapshots, all 4 checkpoints) is the engine's in run --json and run -v",
           "hplan.txt", "hplan.err", "hrun.json", "hrun.err")
sys.exit(1 if failed else 0)
PY
