#!/bin/bash
# SPDX-License-Identifier: MIT
#
# engine.sh: the engine (userspace/engine/engine.h) on two real cards in the
# guest. build/tests/engine_check runs the engine checks
# (tests/lib/engine_cases.c) there (concurrent greedy sessions equal each alone and share
# micro-batches, a prefix-cache hit gives identical output with
# cached_tokens > 0, a cancelled request frees its slot for the queued
# one, limits, destroy gives the card memory back); then `rk1828-llm run`
# with the same prompt, options and 2 cards must print the text the
# first session produced while batched with three others. Prints TAP;
# exit 1 when a check failed.
root=$(cd "$(dirname "$0")/../.." && pwd)
export RK1828_MODEL=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
tmp=$(mktemp -d /tmp/engine.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

hybrid=$root/build/synth/qwen35-engine.gguf	# a missing file fails its load check
ENGINE_CHECK_OUT=$tmp/batched.txt ENGINE_CHECK_HYBRID=$hybrid "$root/build/tests/engine_check" |
	tee "$tmp/tap"
rc=${PIPESTATUS[0]}
n=$(grep -cE '^(not )?ok ' "$tmp/tap")
n=$((n + 1))
if "$root/build/rk1828-llm" run -m "$RK1828_MODEL" -p "Once upon a time" -n 24 --temp 0 \
	--cards 2 --ctx 256 --bucket 8 >"$tmp/run.txt" 2>"$tmp/run.err" &&
   [ -s "$tmp/batched.txt" ] && [ "$(cat "$tmp/run.txt")" = "$(cat "$tmp/batched.txt")" ]; then
	echo "ok $n - rk1828-llm run prints what the batched session produced"
else
	echo "not ok $n - rk1828-llm run prints what the batched session produced"
	sed 's/^/# run: /' "$tmp/run.txt" "$tmp/run.err"
	sed 's/^/# batched: /' "$tmp/batched.txt" 2>/dev/null
	rc=1
fi
echo "1..$n"
exit "$rc"
