# SPDX-License-Identifier: MIT
#
# Shell functions of the test drivers tests/run-all and tests/run-kernels
# (sourced from the top of the tree): TAP counting, one guest boot running
# tests/guest-suite with its dmesg check, the kselftests' kernel tree.
# The caller sets root, log and passed=0 failed=0 skipped=0; timings
# collects the lines of the closing time table (timed), group_times the
# times of the tests run with group=NAME (summed by the caller).
timings=()
group_times=()

# timed NAME SECONDS: one line of the closing time table.
timed() { timings+=("$(printf '%6d s  %s' "$2" "$1")"); }

# count FILE: add the TAP results in FILE to the totals.
count() {
	local p f s
	p=$(grep -cE '^ok [0-9]+' "$1" | head -n1)
	s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$1" | head -n1)
	f=$(grep -cE '^not ok [0-9]+' "$1" | head -n1)
	passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
}

# run_tap NAME CMD...: run a TAP-printing test; a crash or non-zero exit
# without a "not ok" line counts as one failure.
run_tap() {
	local name=$1; shift
	local out="$log/$name.log"
	local t0=$SECONDS
	echo "# --- $name"
	"$@" >"$out" 2>&1
	local rc=$?
	if [ -n "${group:-}" ]; then
		group_times+=("$((SECONDS - t0)) $name")
	else
		timed "host: $name" $((SECONDS - t0))
	fi
	cat "$out"
	count "$out"
	if [ $rc -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$out"; then
		echo "not ok 1 - $name exited with status $rc"
		failed=$((failed + 1))
	fi
}

# ksft_tree: the kselftests run from a kernel tree, as they would
# upstream: install them into the unpacked linux-source and build them
# there (one TAP line).
ksft_tree() {
	if tools/unpack-kernel-source build/linux-source >"$log/ktree.txt" 2>&1 &&
	   make -s selftests-install KTREE=build/linux-source >>"$log/ktree.txt" 2>&1 &&
	   make -s -C build/linux-source/tools/testing/selftests \
		TARGETS=drivers/accel/rk1828 >>"$log/ktree.txt" 2>&1; then
		echo "ok 1 - selftests install and build in the linux-source tree"
		passed=$((passed + 1))
	else
		echo "not ok 1 - selftests install and build in the linux-source tree"
		tail -n 20 "$log/ktree.txt"
		failed=$((failed + 1))
	fi
}

# guest TRANSPORT: one boot running tests/guest-suite, and its checks,
# printed (TAP; counted by boot_report, so that boots can run side by
# side in subshells). It boots the default kernel, or the Debian kernel
# $guest_kernel names (tools/vm-run --kernel VERSION: 7.3, say).
guest_kernel=
guest() {
	local t=$1 out="$log/guest-$1" glog="$log/guest-$1.log"
	local rc n vm host_srv= t_guest bad srv_opts=() srv_port=18280 host_port=
	local share=$root/$log/server-share suite=full disk_opts=()
	local label=$t${guest_kernel:+, Linux $guest_kernel}

	# The mixed boot runs only the tests that mixing the links can break
	# (tests/guest-suite, RK1828_SUITE=mixing): the rest ran on each link.
	[ "$t" = mixed ] && suite=${RK1828_MIXED_SUITE:-mixing}

	echo "# --- guest, transport $t${guest_kernel:+, Linux $guest_kernel} (4 emulated cards; booting takes about a minute under TCG)"
	# The server tests share the USB boot: the guest serves on cards 0,1,
	# forwarded to the host's loopback, where the SDK, fuzz, concurrency
	# and Chromium tests run (tests/server/run-host) while the guest waits.
	# The host port is any free one, so that runs of several engineers on
	# one machine do not collide; the guest's port is fixed.
	if [ "$t" = usb ] && [ "${RK1828_SERVER_GUEST:-1}" != 0 ]; then
		host_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		mkdir -p "$share"
		srv_opts=(--forward "$host_port:$srv_port" --share "$share")
	fi
	# The PCIe boot runs the synthetic Qwen-family models against llama.cpp
	# (tests/e2e/qwen-vs-llama.sh): their 2.2 GB come on a disk image
	# (tools/mk-disk-image, rebuilt only when build/synth changed), read at
	# disk speed instead of the 9p root's ~4.5 MB/s under TCG.
	if [ "$t" = pcie ] && [ -d build/synth ]; then
		if tools/mk-disk-image build/synth build/synth.img >"$log/synth-img.txt" 2>&1; then
			disk_opts=(--disk build/synth.img)
		else
			echo "# build/synth.img not made (the Qwen checks read build/synth over 9p):"
			sed 's/^/#   /' "$log/synth-img.txt"
		fi
	fi
	t_guest=$(date +%s)
	# Card 2 throttles at 50 C (the others at the emulator's 95 C):
	# rk1828_netlink drives it over that and back (RK1828_THERMAL=N:C).
	tools/vm-run ${guest_kernel:+--kernel "$guest_kernel"} \
		--cards 4 --transport "$t" --keep-out "$out" "${srv_opts[@]}" "${disk_opts[@]}" \
		--emu-args "2:--temp-limit 50" \
		--module-args "job_timeout_ms=3000" -- env RK1828_MODEL="$RK1828_MODEL" RK1828_SUITE="$suite" \
		RK1828_THERMAL=2:50 \
		RK1828_SERVER_SHARE="${srv_opts:+$share}" RK1828_SERVER_PORT="$srv_port" tests/guest-suite \
		>"$glog" 2>&1 &
	vm=$!
	if [ ${#srv_opts[@]} -gt 0 ]; then
		tests/server/run-host "$share" "$host_port" "$vm" >"$log/server-host.log" 2>&1 &
		host_srv=$!
	fi
	wait "$vm"
	rc=$?
	cat "$glog"
	echo "# guest boot ($label): $(( $(date +%s) - t_guest )) s"
	if [ -n "$host_srv" ]; then
		wait "$host_srv"
		echo "# --- server tests on the host against the guest's server"
		cat "$log/server-host.log"
	fi
	n=1
	# drm_sched_fini() says so (a dev_warn, no WARN) when it tears down a
	# scheduler with jobs still pending.
	bad='WARNING:|BUG:|Oops|refcount_t|general protection|Call Trace|Poison overwritten|Redzone'
	bad+='|jobs are pending'
	if [ -f "$out/dmesg.txt" ]; then
		if grep -qE "$bad" "$out/dmesg.txt"; then
			echo "not ok $n - guest ($label) dmesg has no WARN, BUG, oops or slab splat"
			grep -nE "$bad" "$out/dmesg.txt" | head -n 20
		else
			echo "ok $n - guest ($label) dmesg has no WARN, BUG, oops or slab splat"
		fi
	else
		echo "not ok $n - guest ($label) ran to the end (vm-run status $rc)"
	fi
	if [ $rc -ne 0 ] && ! grep -qE '^not ok [0-9]+' "$glog"; then
		echo "not ok $((n + 1)) - guest suite ($label) exited with status $rc"
	fi
}

# boot_report T: print boot T's results ($log/guest-T.out, written by
# guest T), count them, and add its time and its tests' to the table.
boot_report() {
	local t=$1 f=$log/guest-$1.out secs
	cat "$f"
	count "$f"
	secs=$(sed -n "s/^# guest boot ($t[^)]*): \\([0-9]*\\) s$/\\1/p" "$f")
	timed "guest $t: the boot, in all" "${secs:-0}"
	sed -n 's/^# time: \(.*\) took \([0-9]*\) s$/\2 \1/p' "$f" | grep -v '^[0-9]* guest suite$' |
		sed 's|build/linux-source/tools/testing/selftests/drivers/accel/rk1828/||; s|bash tests/e2e/||' |
		while read -r secs what; do printf '%6d s    %s: %s\n' "$secs" "$t" "$what"; done >"$f.times"
	mapfile -t -O "${#timings[@]}" timings <"$f.times"
	if grep -q '^# host-side server tests: ' "$f"; then
		timed "guest $t: host-side server tests (beside the guest)" \
			"$(sed -n 's/^# host-side server tests: \([0-9]*\) s$/\1/p' "$f" | head -n 1)"
	fi
}

# boot T: one boot, its output in $log/guest-T.out, then its report.
boot() {
	guest "$1" >"$log/guest-$1.out" 2>&1
	boot_report "$1"
}
