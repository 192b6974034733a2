#!/bin/bash
# SPDX-License-Identifier: MIT
#
# example-copy.sh: examples/card-copy, built outside librk1828's tree
# against its staged install through pkg-config alone (make examples),
# runs its COPY round trip (host BO -> card BO -> host BO, chained by a
# syncobj) on every card of the guest through librk1828.so.1, with 4 KiB
# and 8 MiB buffers. Prints TAP; exit 1 when a check failed.
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/build/examples/card-copy
export LD_LIBRARY_PATH=$root/build/stage/lib
n=0 rc=0
if [ ! -x "$bin" ]; then
	echo "not ok 1 - $bin was built (make examples)"
	echo "1..1"; exit 1
fi
cards=$(ls /dev/accel 2>/dev/null | grep -c '^accel')
for size in 4096 8388608; do
	out=$("$bin" "$size" 2>&1); st=$?
	good=$(grep -c ": \(usb\|pcie\) [0-9]* Mbit/s, $size bytes host -> card -> host: ok$" <<<"$out")
	n=$((n + 1))
	if [ "$st" = 0 ] && [ "$cards" -ge 1 ] && [ "$good" = "$cards" ]; then
		echo "ok $n - card-copy $size: the bytes came back on each of the $cards cards"
	else
		echo "not ok $n - card-copy $size: the bytes came back on each of the $cards cards (exit $st, $good ok)"
		sed 's/^/#   /' <<<"$out"
		rc=1
	fi
done
echo "1..$n"
exit "$rc"
