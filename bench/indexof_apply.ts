/**
 * A reference for the whole-process comparison, not a peer: the least a
 * Bun script can do to apply a Codex patch to one local file — read it,
 * find each chunk's old lines with one native `indexOf` from the previous
 * chunk on (first match, no uniqueness check, no tiers), splice, write it
 * back. What start-up, I/O and a native search cost, with nothing else.
 *
 * Usage: `bun bench/indexof_apply.ts FILE < patch`.
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { naiveParse } from "./peers.ts";

const [file] = process.argv.slice(2);
if (!file) {
  console.error("usage: bun bench/indexof_apply.ts FILE < patch");
  process.exit(2);
}
const update = naiveParse(readFileSync(0, "utf8"))[0]!;
const text = readFileSync(file, "utf8");
const parts: string[] = [];
let cursor = 0;
for (const chunk of update.chunks) {
  const old = chunk.oldLines.join("\n") + "\n";
  const at = text.indexOf(old, cursor);
  if (at < 0) {
    console.error("a chunk does not match");
    process.exit(1);
  }
  parts.push(text.slice(cursor, at), chunk.newLines.map((l) => l + "\n").join(""));
  cursor = at + old.length;
}
parts.push(text.slice(cursor));
writeFileSync(file, parts.join(""));
