#!/bin/bash
# SPDX-License-Identifier: MIT
#
# p2p-fallback.sh: card-to-card P2P where the kernel allows it, the host
# hop everywhere else, the same greedy text either way (issue 24).
#
# Runs inside the guest (tools/vm-run --cards 4 --transport mixed
# [--pcie-switch] -- bash tests/e2e/p2p-fallback.sh; tests/guest-suite
# runs it with the other e2e tests). Checks:
#  - `rk1828-llm info` prints one "hop cardA -> cardB: ..." line per
#    ordered pair of cards, with the reason the driver gives: a USB
#    receiver has no peer window (no-window), a USB sender is not PCIe
#    (not-pcie), and between PCIe cards it is "p2p" exactly when the
#    guest kernel has CONFIG_PCI_P2PDMA (Debian's 6.12 has not:
#    no-kernel-p2pdma);
#  - `rk1828-llm plan` on the PCIe cards prints the hop of its plan;
#  - greedy generation on the PCIe cards gives the same text as with
#    RK1828_P2P=off (the host hop forced) and as on one card;
#  - rk1828-smi --json: during that generation the sending card's
#    p2p_bytes grew by the hidden states exactly when its hop is p2p, and
#    bounce_bytes of the receiving card grew when it is not.
# Prints TAP; exit status 1 when a check failed, 2 when something is
# missing. Environment: RK1828_MODEL, RK1828_LLM, RK1828_SMI.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
llm=${RK1828_LLM:-$root/build/rk1828-llm}
smi=${RK1828_SMI:-$root/build/rk1828-smi}
model=${RK1828_MODEL:-$root/../shared/models/stories260K.gguf}
[ -x "$llm" ] && [ -x "$smi" ] || { echo "Bail out! $llm or $smi not built"; exit 2; }
[ -r "$model" ] || { echo "Bail out! model $model not found"; exit 2; }
tmp=$(mktemp -d /tmp/p2p-fallback.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else no "$what"; fi; }

kp2p=unknown
cfg=/boot/config-$(uname -r)
if [ -r "$cfg" ]; then
	if grep -qx 'CONFIG_PCI_P2PDMA=y' "$cfg"; then kp2p=y; else kp2p=n; fi
fi

"$llm" info >"$tmp/info" 2>"$tmp/info.err" || { echo "Bail out! rk1828-llm info failed"; cat "$tmp/info.err"; exit 2; }
sed 's/^/# /' "$tmp/info"
link_of() { awk -v c="card$1:" '$1 == c { for (i = 2; i <= NF; i++) if ($i == "link") print $(i + 1) }' "$tmp/info"; }
mapfile -t cards < <(awk '/^card[0-9]+:/ { sub(/^card/, "", $1); sub(/:$/, "", $1); print $1 }' "$tmp/info")
nc=${#cards[@]}
hops=$(grep -c '^hop card' "$tmp/info")
check "info: one hop line per ordered pair of the $nc cards ($hops)" test "$hops" -eq $((nc * (nc - 1)))

pcie=()
bad=0
for a in "${cards[@]}"; do
	[ "$(link_of "$a")" = pcie ] && pcie+=("$a")
	for b in "${cards[@]}"; do
		[ "$a" = "$b" ] && continue
		got=$(sed -n "s/^hop card$a -> card$b: //p" "$tmp/info")
		if [ "$(link_of "$b")" = usb ]; then want="host (no-window)"
		elif [ "$(link_of "$a")" = usb ]; then want="host (not-pcie)"
		elif [ "$kp2p" = n ]; then want="host (no-kernel-p2pdma)"
		else want=$got; fi	# a P2PDMA kernel: the topology decides
		if [ "$got" != "$want" ]; then
			echo "# card$a -> card$b: '$got', expected '$want'"
			bad=$((bad + 1))
		fi
	done
done
check "info: every hop says why (kernel CONFIG_PCI_P2PDMA: $kp2p)" test "$bad" -eq 0

if [ ${#pcie[@]} -lt 2 ]; then
	echo "ok $((n + 1)) - generation over PCIe cards # SKIP needs two PCIe cards"
	echo "1..$((n + 1))"
	exit $((failed > 0))
fi
pa=${pcie[0]} pb=${pcie[1]}
hop=$(sed -n "s/^hop card$pa -> card$pb: //p" "$tmp/info")
"$llm" plan -m "$model" --cards "$pa,$pb" >"$tmp/plan" 2>/dev/null
sed 's/^/# /' "$tmp/plan"
check "plan --cards $pa,$pb: its hop is '$hop' as info says" \
	grep -qx "hop card$pa -> card$pb: $hop" "$tmp/plan"

# rk1828-smi --json: FIELD of the card whose node is /dev/accel/accelMINOR.
minor_of() { awk -v c="card$1:" '$1 == c { sub(/.*accel/, "", $2); sub(/,$/, "", $2); print $2 }' "$tmp/info"; }
smi_field() {
	"$smi" --json 2>/dev/null | python3 -c '
import json, sys
node, key = "/dev/accel/accel" + sys.argv[1], sys.argv[2]
for c in json.load(sys.stdin)["cards"]:
    if c.get("node") == node:
        print(c.get(key, "missing"))' "$(minor_of "$1")" "$2"
}
gen() {
	"$llm" run -m "$model" -p "Once upon a time" -n 32 --temp 0 --cards "$1" 2>"$tmp/err"
}
p0=$(smi_field "$pa" p2p_bytes) b0=$(smi_field "$pb" bounce_bytes)
two=$(gen "$pa,$pb")
p1=$(smi_field "$pa" p2p_bytes) b1=$(smi_field "$pb" bounce_bytes)
off=$(RK1828_P2P=off gen "$pa,$pb")
one=$(gen "$pa,")	# "N," is card N alone ("N" would be a count)
cp "$tmp/err" "$tmp/err-one"
echo "# text: $two"
check "greedy text on cards $pa,$pb is not empty" test -n "$two"
check "the same text with the host hop forced (RK1828_P2P=off)" test "$two" = "$off"
check "the same text on card $pa alone" test "$two" = "$one"
[ "$two" = "$one" ] || { echo "# card $pa alone: $one"; sed 's/^/# /' "$tmp/err-one"; }
case "$p0$p1$b0$b1" in *[!0-9]*|'') no "rk1828-smi --json has p2p_bytes and bounce_bytes ($p0 $p1 $b0 $b1)" ;;
*)	ok "rk1828-smi --json has p2p_bytes and bounce_bytes"
	if [ "$hop" = p2p ]; then
		check "hop p2p: card$pa's p2p_bytes grew ($p0 -> $p1)" test "$p1" -gt "$p0"
	else
		check "host hop: card$pa moved nothing by P2P ($p0 -> $p1)" test "$p1" -eq "$p0"
		check "host hop: card$pb's bounce_bytes grew ($b0 -> $b1)" test "$b1" -gt "$b0"
	fi ;;
esac
echo "1..$n"
[ "$failed" -eq 0 ]
