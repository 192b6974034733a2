#!/bin/bash
# SPDX-License-Identifier: MIT
#
# cli-run-json-schema.sh: rk1828-llm run --json-schema on 2 cards with
# stories260K, a model that never writes JSON by itself: the engine's
# matcher holds sampled text to
#  - a "pattern" (zod's .regex(/^[A-Z]{2}-\d{3}$/)) and to zod's
#    .email() pattern with a maxLength, checked here with Python's re;
#  - a number range with multipleOf (minimum 0.5, exclusiveMaximum 9.5,
#    multipleOf 0.25) and an integer range;
# for 3 seeds at temperature 1, each run ending as the document closes
# (finish "stop"); propertyNames with a pattern (a record whose keys are
# k0..k9: the model writes keys until the token limit, each one of them);
# and a pattern with a look-ahead is a usage error
# (exit 2) naming it, before any card is opened.
#
# Runs inside the guest (tools/vm-run --cards 2 -- bash tests/e2e/cli-run-json-schema.sh).
# Prints TAP; exit status 1 when a check failed, 2 when something is missing.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}

[ -x "$llm" ] || { echo "Bail out! $llm not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
command -v python3 >/dev/null || { echo "Bail out! python3 missing"; exit 2; }
tmp=$(mktemp -d /tmp/clischema.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

email='^(?:[A-Za-z0-9_'"'"'+\\-]+\\.)*[A-Za-z0-9_'"'"'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$'
cat >"$tmp/schema.json" <<EOF
{"type": "object", "additionalProperties": false, "required": ["code", "email", "x", "n"],
 "properties": {
  "code": {"type": "string", "pattern": "^[A-Z]{2}-\\\\d{3}\$"},
  "email": {"type": "string", "maxLength": 24, "pattern": "$email"},
  "x": {"type": "number", "minimum": 0.5, "exclusiveMaximum": 9.5, "multipleOf": 0.25},
  "n": {"type": "integer", "minimum": -20, "maximum": 20}}}
EOF
for seed in 1 2 3; do
	"$llm" run -m "$model" --cards 2 --temp 1 --seed "$seed" -p "Once upon a time" -n 300 \
		--json-schema "$tmp/schema.json" --json >"$tmp/run$seed.json" 2>"$tmp/run$seed.err"
	echo "$?" >"$tmp/run$seed.rc"
done
"$llm" run -m "$model" --cards 2 --temp 1 --seed 4 -p "Once upon a time" -n 80 --json \
	--json-schema '{"type":"object","propertyNames":{"pattern":"^k\\d$"},"additionalProperties":{"type":"boolean"}}' \
	>"$tmp/rec.json" 2>"$tmp/rec.err"
"$llm" run -m "$model" --cards 2 -p x -n 4 \
	--json-schema '{"type":"string","pattern":"^a(?=b)"}' >"$tmp/bad.out" 2>"$tmp/bad.err"
echo "$?" >"$tmp/bad.rc"

python3 - "$tmp" "$email" <<'PY'
import json, os, re, sys

d, email = sys.argv[1], sys.argv[2].replace("\\\\", "\\")
n = failed = 0

def read(name):
    try:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""

def report(ok, name, diag=""):
    global n, failed
    n += 1
    print(("ok %d - %s" if ok else "not ok %d - %s") % (n, name))
    if not ok:
        failed += 1
        for line in str(diag).splitlines()[:20]:
            print("#   " + line)

for seed in (1, 2, 3):
    rc = read("run%d.rc" % seed).strip()
    try:
        out = json.loads(read("run%d.json" % seed))
        doc = json.loads(out.get("text", ""))
    except ValueError:
        out, doc = {}, None
    ok = (rc == "0" and isinstance(doc, dict) and set(doc) == {"code", "email", "x", "n"} and
          isinstance(doc["code"], str) and re.fullmatch(r"[A-Z]{2}-\d{3}", doc["code"]) is not None and
          isinstance(doc["email"], str) and len(doc["email"]) <= 24 and re.search(email, doc["email"]) is not None and
          isinstance(doc["x"], (int, float)) and 0.5 <= doc["x"] < 9.5 and doc["x"] * 4 == int(doc["x"] * 4) and
          isinstance(doc["n"], int) and -20 <= doc["n"] <= 20 and
          out.get("stats", {}).get("finish") == "stop")
    report(ok, "seed %d: sampled text follows the pattern, zod's email pattern, the number and integer ranges (%s)"
           % (seed, out.get("text", "")[:160].replace("\n", " ")),
           read("run%d.json" % seed) + read("run%d.err" % seed))

try:
    rec = json.loads(read("rec.json")).get("text", "")
except ValueError:
    rec = ""
keys = re.findall(r'"([^"]*)"\s*:', rec)
report(rec.startswith("{") and len(keys) >= 2 and all(re.fullmatch(r"k\d", k) for k in keys),
       "propertyNames pattern ^k\\d$: every key of the sampled record is k0..k9 (%d keys)" % len(keys),
       read("rec.json") + read("rec.err"))

err = read("bad.err")
report(read("bad.rc").strip() == "2" and "look-ahead '(?=' is not supported" in err,
       "a pattern with a look-ahead: exit 2 naming it", err)
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
