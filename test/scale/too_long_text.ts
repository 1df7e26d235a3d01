/**
 * A file whose text is longer than the engine's longest string: under V8
 * (Node, Deno) 536,870,888 characters. Run under Node by
 * test/scale/huge_inputs.test.ts: decodeText says `too_long` (never
 * `invalid_utf8` — the bytes are valid), planPatch refuses an Update and
 * readWindow a read with `limit_exceeded`, and a Delete is still planned.
 * Prints one JSON line with what each said.
 *
 *   node test/scale/too_long_text.ts
 *
 * @module
 */
import { parsePatch, planPatch, readWindow } from "../../mod.ts";
import { decodeText } from "../../lib/text/text.ts";

const size = 2 ** 29 + 4096; // past V8's 2^29 - 24 characters, as ASCII
const bytes = new Uint8Array(size).fill(0x61);
for (let i = 79; i < size; i += 80) bytes[i] = 0x0a;
const snap = { path: "big.txt", kind: "file" as const, bytes, sha256: "a".repeat(64), size, mode: 0o644, nlink: 1 };
const snapshots = new Map([["big.txt", snap]]);
const limits = { maxFileBytes: 2 ** 31 };
const plan = (patch: string) => {
  const parsed = parsePatch(patch, { limits });
  if (!parsed.ok) throw new Error(parsed.errors[0]!.message);
  const r = planPatch(parsed.patch, snapshots, { limits });
  return r.ok ? { ok: true, ops: r.plan.files.map((f) => f.op) } : { ok: false, errors: r.errors.map((e) => ({ code: e.code, limit: e.limit, message: e.message })) };
};
const decoded = decodeText(bytes);
const window = readWindow(bytes, { path: "big.txt" });
const out = {
  decoded: decoded.ok ? { ok: true } : decoded,
  update: plan(`*** Begin Patch\n*** Update File: big.txt\n@@\n-${"a".repeat(79)}\n+b\n*** End Patch`),
  remove: plan("*** Begin Patch\n*** Delete File: big.txt\n*** End Patch"),
  read: "code" in window ? { code: window.code, limit: window.limit, message: window.message } : { ok: true },
};
process.stdout.write(JSON.stringify(out) + "\n");
