#!/bin/bash
# SPDX-License-Identifier: MIT
#
# smi.sh: rk1828-smi against the driver's generic netlink family, on every
# card of the guest (tests/guest-suite's boot; by hand:
# tools/vm-run --cards 2 -- bash tests/e2e/smi.sh). Checks:
#  - the table has one row per /dev/accel/accelN, each node once;
#  - --json agrees with GET_PARAM (build/tests/card_params: memory total
#    and free, link, speed, serial, protocol) and with debugfs info
#    (serial, resets) for every card;
#  - -i N gives that card alone; an index that names no card exits 4 with
#    the kernel's message;
#  - events: a reset through debugfs and one through `rk1828-smi reset`
#    give exactly two reset lines as they happen, reasons debugfs then
#    admin, with the reset count the JSON shows afterwards;
#  - an unprivileged `reset` exits 5 with "permission denied" and resets
#    nothing;
#  - -l 1 --json prints one object per second until SIGINT, then exits 0;
#  - the server's /metrics (metrics_render(), build/tests/metrics_dump)
#    has every card with the values --json shows, under the JSON's names;
#  - the udev rule (dkms/70-rk1828.rules) gives our nodes group rk1828,
#    mode 0660 (udevadm test, when udev is installed);
#  - events follows a module reload: rmmod gives one card-remove per card
#    and "unloaded" on stderr, insmod "loaded again", one card-add per
#    card (the same serials) and then a debugfs reset of a reloaded card
#    is printed as it happens (reloads $RK1828_KO, default build/rk1828.ko,
#    with the job_timeout_ms it was loaded with).
# Prints TAP; exit status 1 when a check failed, 2 when something is missing.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
smi=$root/build/rk1828-smi
params=$root/build/tests/card_params
mdump=$root/build/tests/metrics_dump
[ -x "$smi" ] || { echo "Bail out! $smi not built"; exit 2; }
[ -x "$params" ] || { echo "Bail out! $params not built"; exit 2; }
[ -x "$mdump" ] || { echo "Bail out! $mdump not built"; exit 2; }
command -v python3 >/dev/null || { echo "Bail out! python3 missing"; exit 2; }
# A module without the driver's side of issue 11 (kernel/rk1828_netlink.c)
# has no family to talk to.
if ! grep -qw rk1828_netlink_register /proc/kallsyms; then
	echo "1..1"
	echo "ok 1 - rk1828-smi against the driver # SKIP the loaded rk1828.ko has no netlink family"
	exit 0
fi
tmp=$(mktemp -d /tmp/smi.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
echo "1..10"

report() {
	local ok=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" = 1 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
		for l in "$@"; do printf '#   %s\n' "$l"; done
	fi
}

ncards=$(ls /dev/accel 2>/dev/null | grep -c '^accel')

# wait_for FILE REGEX COUNT SECONDS: until FILE has COUNT lines matching
# (status 1 after SECONDS). Every wait for another process (the events
# listener, a module load) polls with a deadline that only a hang reaches
# (a loaded TCG guest is 10-50x slower than a native run), never a sleep.
wait_for() {
	local t
	for ((t = 0; t < $4 * 10; t++)); do
		[ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. The table.
out=$("$smi" 2>&1)
rc=$?
ok=1
[ $rc -eq 0 ] || ok=0
rows=$(grep -cE '^ *[0-9]+  /dev/accel/accel[0-9]+ ' <<<"$out")
[ "$rows" -eq "$ncards" ] || ok=0
for d in /dev/accel/accel*; do
	[ "$(grep -c " $d " <<<"$out")" -eq 1 ] || ok=0
done
report $ok "table: exit 0, one row per accel node ($rows rows, $ncards nodes)" "$out"

# 2. --json against GET_PARAM and debugfs.
"$params" >"$tmp/params" 2>&1
"$smi" --json >"$tmp/smi.json" 2>"$tmp/smi.err"
res=$(python3 - "$tmp/smi.json" "$tmp/params" "$ncards" <<'EOF'
import json, os, sys
doc = json.load(open(sys.argv[1]))
params = {p["node"]: p for p in map(json.loads, open(sys.argv[2]))}
errs = []
cards = doc["cards"]
if len(cards) != int(sys.argv[3]) or len(params) != len(cards):
    errs.append("%d cards in json, %d from GET_PARAM, %s nodes" % (len(cards), len(params), sys.argv[3]))
for c in cards:
    p = params.get(c["node"])
    if not p:
        errs.append("%s: not opened by card_params" % c["node"]); continue
    for k in ("memory_total_bytes", "memory_free_bytes", "link", "link_speed_mbps",
              "serial", "protocol_version"):
        if c[k] != p[k]:
            errs.append("%s: %s %r, GET_PARAM %r" % (c["node"], k, c[k], p[k]))
    if c["memory_used_bytes"] != c["memory_total_bytes"] - c["memory_free_bytes"]:
        errs.append("%s: used != total - free" % c["node"])
    info = {}
    try:
        for line in open("/sys/kernel/debug/accel/%s/info" % c["dev_name"]):
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except OSError as e:
        errs.append("%s: debugfs info: %s" % (c["node"], e)); continue
    if int(info["serial"], 16) != c["serial"]:
        errs.append("%s: serial %x, debugfs %s" % (c["node"], c["serial"], info["serial"]))
    if int(info["resets"]) != c["resets"]:
        errs.append("%s: resets %d, debugfs %s" % (c["node"], c["resets"], info["resets"]))
    if [q["id"] for q in c["queues"]] != ["mgmt", "compute", "copy"]:
        errs.append("%s: queues %r" % (c["node"], [q["id"] for q in c["queues"]]))
print("ok" if not errs else "; ".join(errs))
EOF
)
report "$([ "$res" = ok ] && echo 1 || echo 0)" \
	"--json agrees with GET_PARAM (memory, link, serial, protocol) and debugfs (serial, resets)" \
	"$res" "$(head -c 2000 "$tmp/smi.err")"

# Card 0 of the JSON: index, node's device name, reset count.
read -r idx0 dev0 resets0 < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["cards"][0]
print(c["index"], c["dev_name"], c["resets"])' "$tmp/smi.json")

# 3. -i N and a wrong index.
one=$("$smi" -i "$idx0" --json 2>&1)
rc1=$?
bad=$("$smi" -i 999 2>&1)
rc2=$?
ok=1
[ $rc1 -eq 0 ] && python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [c["index"] for c in d["cards"]] == [int(sys.argv[2])]' "$one" "$idx0" 2>/dev/null || ok=0
[ $rc2 -eq 4 ] && grep -q 'card-get of card 999: no rk1828 card with this index' <<<"$bad" || ok=0
report $ok "-i $idx0 gives that card; -i 999 exits 4 with the kernel's message" \
	"-i $idx0: rc $rc1 $one" "-i 999: rc $rc2 $bad"

# 4. events: a debugfs reset and an admin reset, as they happen.
"$smi" events -t 300 >"$tmp/ev.out" 2>"$tmp/ev.err" &
ev=$!
wait_for "$tmp/ev.err" listening 1 120
echo 1 >"/sys/kernel/debug/accel/$dev0/reset"
rc_dbg=$?
"$smi" reset "$idx0" >"$tmp/reset.out" 2>&1
rc_adm=$?
# Both resets are done (the kernel multicasts each event before the reset
# returns); the listener prints them when it gets to run.
wait_for "$tmp/ev.out" ' reset ' 2 120
kill -INT $ev
wait $ev
rc_ev=$?
"$smi" -i "$idx0" --json >"$tmp/after.json" 2>&1
resets1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cards"][0]["resets"])' "$tmp/after.json" 2>/dev/null)
ok=1
[ $rc_dbg -eq 0 ] && [ $rc_adm -eq 0 ] && [ $rc_ev -eq 0 ] || ok=0
[ "$(grep -c ' reset ' "$tmp/ev.out")" -eq 2 ] || ok=0
grep -qE "^[0-9T:.-]+Z card $idx0 reset reason=debugfs ctx=- result=0 resets=$((resets0 + 1))\$" "$tmp/ev.out" || ok=0
grep -qE "^[0-9T:.-]+Z card $idx0 reset reason=admin ctx=- result=0 resets=$((resets0 + 2))\$" "$tmp/ev.out" || ok=0
[ "$(grep ' reset ' "$tmp/ev.out" | head -n1 | grep -c reason=debugfs)" -eq 1 ] || ok=0
[ "$resets1" = "$((resets0 + 2))" ] || ok=0
report $ok "events: debugfs then admin reset of card $idx0, exactly 2 reset lines; resets $resets0 -> $resets1" \
	"rc debugfs $rc_dbg, reset $rc_adm, events $rc_ev" "$(cat "$tmp/ev.out" "$tmp/ev.err" "$tmp/reset.out")"

# 5. An unprivileged reset.
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$smi" reset "$idx0" 2>&1)
	rc=$?
	resets2=$("$smi" -i "$idx0" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["cards"][0]["resets"])')
	ok=1
	[ $rc -eq 5 ] && grep -q 'permission denied' <<<"$out" && [ "$resets2" = "$resets1" ] || ok=0
	report $ok "unprivileged reset: exit 5, \"permission denied\", resets stay $resets1" \
		"rc $rc resets $resets2: $out"
else
	report 1 "unprivileged reset # SKIP no setpriv"
fi

# 6. Watch mode: SIGINT once it printed 2 objects (a loaded guest may
# need more than a second for the first).
"$smi" -l 1 --json >"$tmp/watch" 2>&1 &
wpid=$!
wait_for "$tmp/watch" '^\{' 2 120
kill -INT $wpid
wait $wpid
rc=$?
res=$(python3 -c '
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1])]
assert len(docs) >= 2, "%d samples" % len(docs)
assert all(len(d["cards"]) == int(sys.argv[2]) for d in docs)
assert any(c["busy_percent"] is not None for c in docs[-1]["cards"]) or \
       all(c["uptime_seconds"] is None for c in docs[-1]["cards"]), "no busy % with telemetry"
print("ok")' "$tmp/watch" "$ncards" 2>&1 | tail -n1)
report "$([ $rc -eq 0 ] && [ "$res" = ok ] && echo 1 || echo 0)" \
	"-l 1 --json: one object per second, every card, exit 0 on SIGINT" "rc $rc: $res" \
	"$(head -c 1500 "$tmp/watch")"

# 7. No such subcommand / option: usage, exit 2.
"$smi" --bogus >/dev/null 2>&1
rc1=$?
"$smi" reset >/dev/null 2>&1
rc2=$?
report "$([ $rc1 -eq 2 ] && [ $rc2 -eq 2 ] && echo 1 || echo 0)" \
	"bad option and reset without index exit 2" "rc $rc1 $rc2"

# 8. The server's /metrics against --json (values that do not move while
# nothing runs: memory, contexts, resets, jobs, depth).
"$smi" --json --sample-ms 0 >"$tmp/m.json" 2>&1
"$mdump" >"$tmp/metrics" 2>&1
res=$(python3 - "$tmp/m.json" "$tmp/metrics" <<'EOF'
import json, re, sys
cards = json.load(open(sys.argv[1]))["cards"]
m = {}
for line in open(sys.argv[2]):
    x = re.match(r'^([a-zA-Z0-9_:]+)(\{[^}]*\})? (\S+)$', line)
    if x:
        m[x.group(1) + (x.group(2) or "")] = float(x.group(3))
errs = []
if m.get("rk1828_cards") != len(cards):
    errs.append("rk1828_cards %r, %d in json" % (m.get("rk1828_cards"), len(cards)))
for c in cards:
    lab = 'card="%d",node="%s"' % (c["index"], c["node"])
    for k, name in (("memory_total_bytes", "memory_total_bytes"), ("memory_free_bytes", "memory_free_bytes"),
                    ("memory_used_bytes", "memory_used_bytes"), ("contexts", "contexts"),
                    ("resets", "resets_total"), ("link_speed_mbps", "link_speed_mbps")):
        v = m.get("rk1828_card_%s{%s}" % (name, lab))
        if v != c[k]:
            errs.append("%s %s: metrics %r, json %r" % (c["node"], name, v, c[k]))
    for q in c["queues"]:
        for k in ("jobs_submitted", "jobs_completed", "jobs_failed", "jobs_timedout", "depth"):
            if q[k] is None:
                continue
            name = "rk1828_card_queue_%s%s{%s,queue=\"%s\"}" % (k, "" if k == "depth" else "_total", lab, q["id"])
            if m.get(name) != q[k]:
                errs.append("%s: %r, json %r" % (name, m.get(name), q[k]))
print("ok" if not errs else "; ".join(errs[:8]))
EOF
)
report "$([ "$res" = ok ] && echo 1 || echo 0)" \
	"the server's /metrics has every card with --json's values under its names" "$res"

# 9. The udev rule, through udevadm test with the rule and group in place
# (bind mounts inside the guest only).
rule=$root/dkms/70-rk1828.rules
if command -v udevadm >/dev/null && [ -d /etc/udev/rules.d ]; then
	mkdir -p "$tmp/rules"
	cp "$rule" "$tmp/rules/"
	cp /etc/group "$tmp/group"
	grep -q '^rk1828:' "$tmp/group" || echo 'rk1828:x:987:' >>"$tmp/group"
	gid=$(awk -F: '$1 == "rk1828" { print $3 }' "$tmp/group")
	mount --bind "$tmp/rules" /etc/udev/rules.d && mount --bind "$tmp/group" /etc/group
	out=$(udevadm test --action=add "/sys/class/accel/$(basename "$(ls -d /dev/accel/accel* | head -n1)")" 2>&1)
	umount /etc/group 2>/dev/null
	umount /etc/udev/rules.d 2>/dev/null
	ok=0
	grep -q '70-rk1828.rules' <<<"$out" && grep -qiE "GROUP.*($gid|rk1828)" <<<"$out" &&
		grep -qE 'MODE.*0?660' <<<"$out" && ok=1
	report $ok "udev rule: accel node gets group rk1828 ($gid), mode 0660" \
		"$(grep -iE 'rk1828|GROUP|MODE|perm' <<<"$out" | head -n 20)"
else
	report 1 "udev rule # SKIP no udevadm"
fi

# 10. events across rmmod / insmod.
ko=${RK1828_KO:-$root/build/rk1828.ko}
if [ -r "$ko" ] && [ -d /sys/module/rk1828 ]; then
	mparams=
	tmo=$(cat /sys/module/rk1828/parameters/job_timeout_ms 2>/dev/null) && mparams="job_timeout_ms=$tmo"
	serials=$(python3 -c '
import json, sys
print(" ".join(str(c["serial"]) for c in sorted(json.load(open(sys.argv[1]))["cards"], key=lambda c: c["serial"])))' "$tmp/smi.json")
	"$smi" events -t 600 >"$tmp/rl.out" 2>"$tmp/rl.err" &
	ev=$!
	wait_for "$tmp/rl.err" listening 1 120
	t0=$SECONDS
	for _ in $(seq 600); do
		rmmod rk1828 2>/dev/null && break
		sleep 0.1
	done
	gone=$([ -d /sys/module/rk1828 ] && echo 0 || echo 1)
	wait_for "$tmp/rl.err" 'driver was unloaded' 1 120
	insmod "$ko" $mparams
	rc_ins=$?
	wait_for "$tmp/rl.out" ' card-add ' "$ncards" 120
	ready=$?
	sleep 0.5
	# The first card-add: its index and device, reset through debugfs.
	read -r ridx rdev < <(sed -nE 's/^.* card ([0-9]+) card-add .* dev=([^ ]+) .*$/\1 \2/p' "$tmp/rl.out" | head -n1)
	rc_dbg=1
	[ -n "${rdev:-}" ] && echo 1 >"/sys/kernel/debug/accel/$rdev/reset" && rc_dbg=0
	wait_for "$tmp/rl.out" ' reset ' 1 120
	kill -INT $ev
	wait $ev
	rc_ev=$?
	t_reload=$((SECONDS - t0))
	got_rm=$(sed -nE 's/^.* card-remove .* serial=([0-9]+)$/\1/p' "$tmp/rl.out" | sort -n | tr '\n' ' ' | sed 's/ $//')
	got_add=$(sed -nE 's/^.* card-add .* serial=([0-9]+)$/\1/p' "$tmp/rl.out" | sort -n | tr '\n' ' ' | sed 's/ $//')
	ok=1
	[ "$gone" = 1 ] && [ $rc_ins -eq 0 ] && [ $ready -eq 0 ] && [ $rc_dbg -eq 0 ] && [ $rc_ev -eq 0 ] || ok=0
	[ "$got_rm" = "$serials" ] && [ "$got_add" = "$serials" ] || ok=0
	[ "$(grep -c 'driver was unloaded' "$tmp/rl.err")" -eq 1 ] || ok=0
	[ "$(grep -c 'driver is loaded again' "$tmp/rl.err")" -eq 1 ] || ok=0
	# removes, then adds, then the reset, in that order on stdout
	[ "$(grep -oE ' (card-remove|card-add|reset) ' "$tmp/rl.out" | uniq | tr -d ' ' | tr '\n' ,)" = "card-remove,card-add,reset," ] || ok=0
	grep -qE "^[0-9T:.-]+Z card ${ridx:-none} reset reason=debugfs ctx=- result=0 resets=1\$" "$tmp/rl.out" || ok=0
	report $ok "events across rmmod/insmod ($t_reload s): $ncards card-remove, unloaded, loaded again, $ncards card-add (serials $serials), then card ${ridx:-none}'s reset" \
		"gone $gone insmod $rc_ins ready $ready debugfs $rc_dbg events $rc_ev" \
		"remove: $got_rm" "add: $got_add" "$(cat "$tmp/rl.out" "$tmp/rl.err")"
	[ -d /sys/module/rk1828 ] || insmod "$ko" $mparams
else
	report 1 "events across rmmod/insmod # SKIP no module file $ko"
fi

exit $((failed > 0))
