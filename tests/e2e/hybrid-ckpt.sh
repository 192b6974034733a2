#!/bin/bash
# SPDX-License-Identifier: MIT
#
# hybrid-ckpt.sh: a hybrid model's prefix-cache checkpoints given up for
# memory on real (emulated) cards through the driver (issue 21 part 3).
# Runs inside the guest on 2 small cards, e.g.
#   tools/vm-run --cards 2 --mem-size 16M -- bash tests/e2e/hybrid-ckpt.sh
# Finds the smallest context (by 256) of the synthetic hybrid model
# (build/synth/qwen35-engine.gguf) at which `plan` on the cards gives
# fewer than 4 checkpoints a session (skipped when the cards, as the full
# suite's 5 GB ones, hold ctx 65536 with all 4), then checks:
# - plan's line says them ("N state snapshots (K a session, 4 wanted")
#   and its note, and plan --json's sizes agree;
# - run --json at that context runs exactly that plan: the engine's plan,
#   snapshots and checkpoints (engine_get_info()) are plan's;
# - its greedy tokens are those of the same prompt at ctx 256 (all 4
#   checkpoints): fewer checkpoints never change output.
# Prints TAP; exit status 1 when a check failed, 2 when something is
# missing or no context gives fewer checkpoints on these cards.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
hyb=${RK1828_HYBRID_MODEL:-$root/build/synth/qwen35-engine.gguf}

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$hyb" ] || { echo "Bail out! $hyb missing (make synth-models)"; exit 2; }
tmp=$(mktemp -d /tmp/hckpt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

each() {	# each CTX: checkpoints a session plan gives at CTX on the cards, or "nofit"
	"$llm" plan -m "$hyb" --cards 2 --ctx "$1" --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["sizes"]["snapshots_per_session"])' \
			2>/dev/null || echo nofit
}

# The smallest context (a multiple of 256) at which plan does not give
# all 4 checkpoints: fewer, or no fit when the cards' window is narrower.
if [ "$(each 65536)" = 4 ]; then
	echo "1..1"
	echo "ok 1 - # SKIP the cards hold ctx 65536 with all 4 checkpoints (tools/vm-run --mem-size 16M gives fewer)"
	exit 0
fi
lo=256 hi=65536
while [ $((hi - lo)) -gt 256 ]; do
	mid=$(( (lo + hi) / 2 / 256 * 256 ))
	if [ "$(each "$mid")" = 4 ]; then lo=$mid; else hi=$mid; fi
done
ctx=$hi k=$(each "$hi")
if [ "$k" = nofit ]; then
	echo "Bail out! at ctx $ctx the model does not fit and at $lo it keeps 4 checkpoints: no context in between"
	exit 2
fi
echo "# ctx $ctx: $k checkpoints a session"
p="abcabcabdabcabcabe"
"$llm" plan -m "$hyb" --cards 2 --ctx "$ctx" >"$tmp/plan.txt" 2>"$tmp/plan.err"
"$llm" plan -m "$hyb" --cards 2 --ctx "$ctx" --json >"$tmp/plan.json" 2>/dev/null
"$llm" run -m "$hyb" --cards 2 --ctx "$ctx" --temp 0 -p "$p" -n 8 --json >"$tmp/run.json" 2>"$tmp/run.err"
"$llm" run -m "$hyb" --cards 2 --ctx 256 --temp 0 -p "$p" -n 8 --json >"$tmp/full.json" 2>"$tmp/full.err"

python3 - "$tmp" "$k" <<'PY'
import json, os, sys

d, k = sys.argv[1], int(sys.argv[2])
n = failed = 0

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

print("1..3")
txt, pj, run, full = read("plan.txt"), load("plan.json"), load("run.json"), load("full.json")
plan_line = [l[6:] for l in txt.splitlines() if l.startswith("plan: ")]
report(("1 session, %d state snapshots (%d a session, 4 wanted: fewer prefix-cache checkpoints)" % (k, k)) in txt
       and ("state snapshots lowered from 4 to %d a slot" % k) in read("plan.err")
       and pj.get("sizes", {}).get("snapshots_per_session") == k
       and pj.get("sizes", {}).get("snapshots_wanted_per_session") == 4,
       "plan: %d checkpoints a session, said in the plan line, the note and --json" % k,
       "plan.txt", "plan.err")
eng = run.get("engine", {})
report(plan_line and eng.get("plan") == plan_line[0] and eng.get("snapshots") == k
       and eng.get("checkpoints") == k and eng.get("slots") == 1,
       "run --json: the engine runs plan's plan with %d snapshots, %d checkpoints (%s)"
       % (k, k, json.dumps(eng)), "run.json", "run.err")
report(len(run.get("ids", [])) == 8 and run.get("ids") == full.get("ids")
       and full.get("engine", {}).get("checkpoints") == 4,
       "greedy ids with %d checkpoints = with all 4 (ctx 256)" % k, "run.json", "full.json", "full.err")
sys.exit(1 if failed else 0)
PY
