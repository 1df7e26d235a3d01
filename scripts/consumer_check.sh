#!/usr/bin/env bash
# The packages as a consumer gets them (issues 27 and 32): pack both npm
# tarballs, install them into fresh projects in a temp directory, and use
# them the ways people do. Every check prints "ok: ..." or fails the script
# at once with "FAIL: ...". Run from .ci/run, or by hand:
#
#     bash scripts/consumer_check.sh            # KEEP=1 keeps the temp dir
#
# Needs: npm ci and npm run runtimes done in this checkout (bun comes from its
# node_modules, deno, node 26 and typescript from tools/node_modules; nothing
# else is downloaded but the packages' own dependencies from the npm
# registry), and the system `node` (the one npm runs on), which must satisfy
# package.json's `engines`.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
BIN="$REPO/node_modules/.bin"
RUNTIMES="$REPO/tools/node_modules/.bin"
MAX_LIBRARY_PACKAGES=10   # npm install ssh-apply-patch adds at most this many packages (issue 32.3)
MAX_CORE_BUNDLE_BYTES=$((150 * 1024))   # bun build --target=browser --minify of ./core (issue 32.4)

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
for tool in bun; do [ -x "$BIN/$tool" ] || fail "$BIN/$tool is missing: run npm ci first"; done
for tool in deno node tsc; do [ -x "$RUNTIMES/$tool" ] || fail "$RUNTIMES/$tool is missing: run npm run runtimes first"; done
SYSTEM_NODE=$(command -v node) || fail "no system node on PATH"
PINNED_NODE="$RUNTIMES/node"
DENO="$RUNTIMES/deno"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sap-consumer.XXXXXX")
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false NO_COLOR=1

# --- pack -------------------------------------------------------------------
cd "$REPO"
"$BIN/bun" scripts/build.ts
npm pack --ignore-scripts --silent --pack-destination "$WORK" >/dev/null
npm pack --ignore-scripts --silent --pack-destination "$WORK" -w ssh-apply-patch-mcp >/dev/null
VERSION=$("$SYSTEM_NODE" -p 'require("./package.json").version')
LIB_TGZ="$WORK/ssh-apply-patch-$VERSION.tgz"
MCP_TGZ="$WORK/ssh-apply-patch-mcp-$VERSION.tgz"
[ -f "$LIB_TGZ" ] && [ -f "$MCP_TGZ" ] || fail "npm pack did not write both tarballs: $(ls "$WORK")"

for tgz in "$LIB_TGZ" "$MCP_TGZ"; do
  listing=$(tar tzf "$tgz")
  sources=$(grep -E '\.(ts|mts|cts)$' <<<"$listing" | grep -vE '\.d\.ts$' || true)
  [ -z "$sources" ] || fail "$(basename "$tgz") ships TypeScript sources: $sources"
  stray=$(grep -E '^package/(test|bench|lib|examples|scripts|node_modules|packages)/|fixtures|\.bench-fixtures' <<<"$listing" || true)
  [ -z "$stray" ] || fail "$(basename "$tgz") ships files outside dist/: $stray"
  for must in package/package.json package/LICENSE package/README.md; do
    grep -qx "$must" <<<"$listing" || fail "$(basename "$tgz") lacks $must"
  done
done
# (listings in variables: with pipefail, `tar | grep -q` fails when grep stops reading early)
lib_listing=$(tar tzf "$LIB_TGZ")
mcp_listing=$(tar tzf "$MCP_TGZ")
for must in dist/mod.js dist/mod.d.ts dist/core.js dist/core.d.ts dist/ssh.js dist/ssh.d.ts dist/bin/ssh-apply-patch.js CHANGELOG.md docs/README.md; do
  grep -qx "package/$must" <<<"$lib_listing" || fail "ssh-apply-patch tarball lacks $must"
done
grep -qx "package/dist/bin/ssh-apply-patch-mcp.js" <<<"$mcp_listing" || fail "ssh-apply-patch-mcp tarball lacks its bin"
ok "tarballs: $(wc -l <<<"$lib_listing") + $(wc -l <<<"$mcp_listing") files, JavaScript and .d.ts only"

# --- engines: the system node must be one the package says it supports ------
"$SYSTEM_NODE" -e '
  const [want] = require(process.argv[1]).engines.node.match(/\d+\.\d+/);
  const [a, b] = want.split(".").map(Number);
  const [x, y] = process.versions.node.split(".").map(Number);
  if (x < a || (x === a && y < b)) { console.error(`system node ${process.version} is older than engines ${want}`); process.exit(1); }
' "$REPO/package.json" || fail "engines"
ok "system node $("$SYSTEM_NODE" --version) satisfies engines.node $("$SYSTEM_NODE" -p 'require(process.argv[1]).engines.node' "$REPO/package.json")"

# --- a light install: the library alone ------------------------------------
mkdir "$WORK/library"
cd "$WORK/library"
echo '{ "name": "library-consumer", "private": true, "type": "module" }' >package.json
npm install --silent "$LIB_TGZ" >/dev/null 2>&1 || npm install "$LIB_TGZ" || fail "npm install of the library tarball"
count=$("$SYSTEM_NODE" -p 'Object.keys(require("./node_modules/.package-lock.json").packages).filter((p) => p !== "").length')
names=$("$SYSTEM_NODE" -p 'Object.keys(require("./node_modules/.package-lock.json").packages).filter((p) => p !== "").map((p) => p.replace(/^.*node_modules\//, "")).join(" ")')
[ "$count" -le "$MAX_LIBRARY_PACKAGES" ] || fail "npm install ssh-apply-patch added $count packages (at most $MAX_LIBRARY_PACKAGES): $names"
case " $names " in *" zod "*|*"@modelcontextprotocol"*|*"@types/"*) fail "the library pulled in MCP or type packages: $names" ;; esac
ok "npm install ssh-apply-patch adds $count packages (<= $MAX_LIBRARY_PACKAGES): $names"

# --- the consumer app: both packages ----------------------------------------
APP="$WORK/app"
mkdir "$APP"
cd "$APP"
echo '{ "name": "app", "private": true, "type": "module" }' >package.json
npm install --silent "$LIB_TGZ" "$MCP_TGZ" >/dev/null 2>&1 || npm install "$LIB_TGZ" "$MCP_TGZ" || fail "npm install of both tarballs"
[ -x node_modules/.bin/ssh-apply-patch ] && [ -x node_modules/.bin/ssh-apply-patch-mcp ] || fail "the bins are not linked in node_modules/.bin"

# One program for every runtime: the main entry (LocalShell apply, a refused SSH connect), /core, /ssh.
cat >use.mjs <<'EOF'
import { applyPatch, LocalShell } from "ssh-apply-patch";
import { parsePatch, planPatch, sha256Hex } from "ssh-apply-patch/core";
import { connectSsh, parseSshDestination } from "ssh-apply-patch/ssh";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const root = mkdtempSync(join(tmpdir(), "sap-use-"));
writeFileSync(join(root, "a.txt"), "one\ntwo\n");
const patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n";
const report = await applyPatch(new LocalShell(), { root, patch });
const parsed = parsePatch(patch);
let ssh;
try {
  await connectSsh({ host: "127.0.0.1", port: 1, sshConfigFile: false, agent: false, readyTimeoutMs: 5000 });
  ssh = "connected?";
} catch (error) {
  ssh = error.failure?.code ?? error.code ?? String(error);
}
console.log(JSON.stringify({
  resolved: [import.meta.resolve("ssh-apply-patch"), import.meta.resolve("ssh-apply-patch/core"), import.meta.resolve("ssh-apply-patch/ssh")],
  ok: report.ok,
  text: readFileSync(join(root, "a.txt"), "utf8"),
  parsed: parsed.ok,
  plan: typeof planPatch,
  sha: sha256Hex("abc"),
  host: parseSshDestination("deploy@web1:2222")?.host ?? null,
  ssh,
}));
rmSync(root, { recursive: true, force: true });
EOF
sed -e 's/from "ssh-apply-patch/from "npm:ssh-apply-patch/' -e 's/resolve("ssh-apply-patch/resolve("npm:ssh-apply-patch/g' use.mjs >use_deno.mjs
echo '{ "nodeModulesDir": "manual", "lock": false }' >deno.json
check_use() {
  local name=$1
  shift
  local out
  out=$("$@" 2>"$WORK/stderr") || fail "$name: the consumer program exited $?: $(cat "$WORK/stderr")"
  "$SYSTEM_NODE" -e '
    const out = JSON.parse(process.argv[1].trim().split("\n").pop());
    const want = { ok: true, text: "one\nTWO\n", parsed: true, plan: "function", sha: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", host: "web1", ssh: "connect_failed" };
    for (const [k, v] of Object.entries(want)) if (out[k] !== v) { console.error(`${k}: ${JSON.stringify(out[k])}, expected ${JSON.stringify(v)}`); process.exit(1); }
    const dist = ["dist/mod.js", "dist/core.js", "dist/ssh.js"];
    out.resolved.forEach((r, i) => { if (!r.endsWith(`/node_modules/ssh-apply-patch/${dist[i]}`)) { console.error(`resolved ${r}`); process.exit(1); } });
  ' "$out" || fail "$name: unexpected result $out"
  ok "$name imports ., ./core, ./ssh from dist/ and applies a patch"
}
check_use "system node $("$SYSTEM_NODE" --version)" "$SYSTEM_NODE" use.mjs
# CommonJS: require() of the package works where Node has require(esm) (>= 20.19, >= 22.12; no
# top-level await anywhere in dist/), and is Node's own ERR_REQUIRE_ESM before (docs/library.md).
cat >use.cjs <<'EOF'
const { applyPatch } = require("ssh-apply-patch");
const { sha256Hex } = require("ssh-apply-patch/core");
const { connectSsh } = require("ssh-apply-patch/ssh");
console.log(typeof applyPatch, typeof connectSsh, sha256Hex("abc"));
EOF
for node in "$SYSTEM_NODE" "$PINNED_NODE"; do
  if [ "$("$node" -p 'process.features.require_module === true')" = true ]; then
    out=$("$node" use.cjs 2>&1) || fail "require() from CommonJS under node $("$node" --version): $out"
    [ "$out" = "function function ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" ] || fail "require() under node $("$node" --version): $out"
    ok "require() of ., ./core, ./ssh from CommonJS under node $("$node" --version)"
  else
    out=$("$node" use.cjs 2>&1) && fail "require() worked without require(esm)?"
    grep -q ERR_REQUIRE_ESM <<<"$out" || fail "require() under node $("$node" --version) without require(esm): $out"
    ok "require() under node $("$node" --version) (no require(esm)): Node's ERR_REQUIRE_ESM, as documented"
  fi
done
check_use "pinned node $("$PINNED_NODE" --version)" "$PINNED_NODE" use.mjs
check_use "bun $("$BIN/bun" --version)" "$BIN/bun" use.mjs
check_use "deno (npm: specifiers) $("$DENO" --version | head -n1 | cut -d' ' -f2)" "$DENO" run -A use_deno.mjs

# --- TypeScript consumers: nodenext and bundler, strict, skipLibCheck false ----
# Neither @types/ssh2 nor @types/node is installed: the declarations need neither.
# A third project, typical of Node, adds @types/node and drops the DOM library.
cat >consumer.ts <<'EOF'
import { applyPatch, LocalShell, readSnapshots } from "ssh-apply-patch";
import type { ApplyReport, RemoteShell } from "ssh-apply-patch";
import { DEFAULT_LIMITS, parsePatch, planPatch, rewordFailure, sha256Hex, unifiedDiff } from "ssh-apply-patch/core";
import type { FileSnapshot, PatchFailure, Snapshots } from "ssh-apply-patch/core";
import { connectSsh, parseKnownHosts } from "ssh-apply-patch/ssh";
import type { SshOptions } from "ssh-apply-patch/ssh";

export async function run(root: string, patch: string): Promise<string> {
  const shell: RemoteShell = new LocalShell();
  const report: ApplyReport = await applyPatch(shell, { root, patch });
  if (!report.ok) {
    // Results narrow through the shipped declarations: a failed report has at least one error.
    const first: PatchFailure = report.errors[0];
    return rewordFailure(first, () => undefined).message;
  }
  const snaps = await readSnapshots(shell, root, report.files.map((f) => f.path));
  return [...snaps.keys()].join(",");
}

export function plan(text: string, bytes: Uint8Array): string {
  const parsed = parsePatch(text);
  if (!parsed.ok) return parsed.errors[0].code;
  const snapshot: FileSnapshot = { path: "a.txt", kind: "file", bytes, sha256: sha256Hex(bytes), mode: 0o644 };
  const snapshots: Snapshots = new Map([["a.txt", snapshot]]);
  const planned = planPatch(parsed.patch, snapshots);
  return planned.ok ? String(planned.plan.files.length) : planned.errors[0].message;
}

export const limits: number = DEFAULT_LIMITS.maxPatchBytes;
export const diff: typeof unifiedDiff = unifiedDiff;
export const options: SshOptions = { host: "web1", agent: false };
export const connect: typeof connectSsh = connectSsh;
export const hosts: ReturnType<typeof parseKnownHosts> = parseKnownHosts("");
EOF
tsc_check() {
  local name=$1 module=$2 resolution=$3 lib=$4 types=$5 extra=${6:-}
  cat >"tsconfig.$name.json" <<EOF
{ "compilerOptions": { "module": "$module", "moduleResolution": "$resolution", "target": "ES2022", "lib": $lib,
    "types": $types, "strict": true, "skipLibCheck": false, "noEmit": true $extra }, "files": ["consumer.ts"] }
EOF
  "$SYSTEM_NODE" "$REPO/tools/node_modules/typescript/bin/tsc" -p "tsconfig.$name.json" >"$WORK/tsc.out" 2>&1 ||
    fail "tsc ($name: module $module, moduleResolution $resolution, lib $lib, types $types):
$(head -n 40 "$WORK/tsc.out")"
  ok "tsc $("$SYSTEM_NODE" "$REPO/tools/node_modules/typescript/bin/tsc" --version) type-checks the consumer: $name (strict, skipLibCheck false)"
}
tsc_check nodenext nodenext nodenext '["ES2022", "DOM"]' '[]'
tsc_check bundler esnext bundler '["ES2022", "DOM"]' '[]'
# The stricter flags people turn on, and the CommonJS-era settings (node10 resolution finds /core and
# /ssh through typesVersions: it does not read `exports`).
tsc_check strictest nodenext nodenext '["ES2022", "DOM"]' '[]' ', "exactOptionalPropertyTypes": true, "noUncheckedIndexedAccess": true, "verbatimModuleSyntax": true, "noPropertyAccessFromIndexSignature": true'
tsc_check commonjs-node10 commonjs node10 '["ES2022", "DOM"]' '[]' ', "esModuleInterop": true'
mkdir -p node_modules/@types
ln -s "$REPO/node_modules/@types/node" node_modules/@types/node
tsc_check node-types nodenext nodenext '["ES2022"]' '["node"]'
rm node_modules/@types/node

# --- the pure core in a browser-like runtime ----------------------------------
"$BIN/bun" build node_modules/ssh-apply-patch/dist/core.js --target=browser --minify --format=esm --outfile core.bundle.js >"$WORK/bundle.out" 2>&1 ||
  fail "bun build --target=browser of ssh-apply-patch/core: $(cat "$WORK/bundle.out")"
size=$(wc -c <core.bundle.js)
[ "$size" -le "$MAX_CORE_BUNDLE_BYTES" ] || fail "the /core browser bundle is $size bytes (at most $MAX_CORE_BUNDLE_BYTES)"
# (the one "node:crypto" string allowed is the runtime probe `process.getBuiltinModule?.("node:crypto")`)
! grep -qE '(from|import) ?\(? ?"node:|require\(' core.bundle.js || fail "the /core browser bundle still imports a node: module or calls require()"
[ "$(grep -oE '"node:[a-z_/]+"' core.bundle.js | sort -u)" = '"node:crypto"' ] || fail "the /core bundle names node: modules: $(grep -oE '"node:[a-z_/]+"' core.bundle.js | sort -u)"
cat >browser_check.mjs <<'EOF'
// No Node globals, as in a browser: the core must hash with its own SHA-256.
delete globalThis.process;
delete globalThis.Buffer;
if ("process" in globalThis || "Buffer" in globalThis) throw new Error("could not hide the Node globals");
const core = await import("./core.bundle.js");
const vectors = [
  ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  ["abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
  ["a".repeat(1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
];
for (const [input, digest] of vectors) {
  const got = core.sha256Hex(input);
  if (got !== digest) throw new Error(`sha256Hex of ${input.length} bytes: ${got}, expected ${digest}`);
}
const before = new TextEncoder().encode("alpha\r\nbeta\r\ngamma\r\n");
const parsed = core.parsePatch("*** Begin Patch\n*** Update File: src/a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** End Patch");
if (!parsed.ok) throw new Error(`parsePatch: ${parsed.errors[0].message}`);
const snapshot = { path: "src/a.txt", kind: "file", bytes: before, sha256: core.sha256Hex(before), mode: 0o644 };
const planned = core.planPatch(parsed.patch, new Map([["src/a.txt", snapshot]]));
if (!planned.ok) throw new Error(`planPatch: ${planned.errors[0].message}`);
const file = planned.plan.files[0];
const after = new TextDecoder().decode(file.newBytes);
if (after !== "alpha\r\nBETA\r\ngamma\r\n") throw new Error(`planned bytes ${JSON.stringify(after)}`);
if (!Object.values(file).includes(core.sha256Hex(file.newBytes))) throw new Error("the plan does not carry the SHA-256 of its new bytes");
if (!file.diff.includes("-beta") || !file.diff.includes("+BETA")) throw new Error(`plan diff: ${file.diff}`);
if (core.formatLineId("gamma", 3) !== `3:${core.lineHash("gamma")}`) throw new Error(`formatLineId: ${core.formatLineId("gamma", 3)}`);
const refused = core.planPatch(core.parsePatch("*** Begin Patch\n*** Update File: src/a.txt\n@@\n-nothing like this\n+x\n*** End Patch").patch, new Map([["src/a.txt", snapshot]]));
if (refused.ok || typeof refused.errors[0].message !== "string") throw new Error("a chunk that matches nothing was not refused");
console.log(`browser-like round trip ok: ${refused.errors[0].code}`);
EOF
out=$("$DENO" run --no-prompt browser_check.mjs 2>&1) || fail "the /core bundle under deno with no permissions and no Node globals: $out"
ok "/core bundles for the browser ($size bytes minified, no node: import) and round-trips under deno with no permissions, JavaScript SHA-256 vectors included: ${out##*: }"

# --- the bins, through npx and bunx --------------------------------------------
PATCH=$'*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n'
help_check() {
  local name=$1 want=$2
  shift 2
  local out
  out=$("$@" --help 2>&1) || fail "$name --help exited $?: $out"
  grep -q -- "$want" <<<"$out" || fail "$name --help does not print its usage ($want): $out"
  ok "$name --help"
}
help_check "npx ssh-apply-patch" "ssh-apply-patch --root DIR" npx --no-install ssh-apply-patch
help_check "npx ssh-apply-patch-mcp" "usage: ssh-apply-patch-mcp" npx --no-install ssh-apply-patch-mcp
help_check "bunx ssh-apply-patch" "ssh-apply-patch --root DIR" "$BIN/bun" x ssh-apply-patch
help_check "bunx ssh-apply-patch-mcp" "usage: ssh-apply-patch-mcp" "$BIN/bun" x ssh-apply-patch-mcp
help_check "bunx --bun ssh-apply-patch" "ssh-apply-patch --root DIR" "$BIN/bun" x --bun ssh-apply-patch

apply_check() {
  local name=$1
  shift
  local root out
  root=$(mktemp -d "$WORK/root.XXXXXX")
  printf 'one\ntwo\n' >"$root/a.txt"
  out=$(printf '%s' "$PATCH" | "$@" --root "$root" 2>&1) || fail "$name: the CLI exited $?: $out"
  [ "$(cat "$root/a.txt")" = $'one\nTWO' ] || fail "$name: a.txt is $(cat "$root/a.txt")"
  grep -q "Applied 1 file" <<<"$out" || fail "$name: $out"
  ok "$name applies a patch on this machine"
}
apply_check "npx ssh-apply-patch (system node)" npx --no-install ssh-apply-patch
apply_check "ssh-apply-patch bin under pinned node" "$PINNED_NODE" node_modules/ssh-apply-patch/dist/bin/ssh-apply-patch.js
apply_check "bunx --bun ssh-apply-patch" "$BIN/bun" x --bun ssh-apply-patch

# The MCP bin answers initialize and tools/list over stdio (its SDK and zod resolve from the install).
cat >mcp_check.mjs <<'EOF'
import { spawn } from "node:child_process";
const [command, ...args] = process.argv.slice(2);
const child = spawn(command, [...args, "--root", `site=${process.cwd()}`], { stdio: ["pipe", "pipe", "inherit"] });
const send = (message) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const timer = setTimeout(() => { console.error("no tools/list answer in 30 s"); child.kill("SIGKILL"); process.exit(1); }, 30_000);
let buffered = "";
child.stdout.on("data", (chunk) => {
  buffered += chunk;
  for (let at = buffered.indexOf("\n"); at >= 0; at = buffered.indexOf("\n")) {
    const message = JSON.parse(buffered.slice(0, at));
    buffered = buffered.slice(at + 1);
    if (message.id === 1) {
      send({ method: "notifications/initialized" });
      send({ id: 2, method: "tools/list", params: {} });
    } else if (message.id === 2) {
      clearTimeout(timer);
      console.log(message.result.tools.map((t) => t.name).sort().join(","));
      child.stdin.end();
      child.kill("SIGTERM");
    }
  }
});
send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "consumer-check", version: "1" } } });
EOF
for runner in "$SYSTEM_NODE" "$PINNED_NODE"; do
  tools=$("$SYSTEM_NODE" mcp_check.mjs "$runner" node_modules/ssh-apply-patch-mcp/dist/bin/ssh-apply-patch-mcp.js 2>"$WORK/stderr") ||
    fail "the MCP bin under $runner: $(cat "$WORK/stderr")"
  grep -q "apply_patch" <<<"$tools" || fail "the MCP bin under $runner lists no apply_patch tool: $tools"
  ok "ssh-apply-patch-mcp under $("$runner" --version) serves over stdio: $tools"
done

echo "consumer check: all passed"
