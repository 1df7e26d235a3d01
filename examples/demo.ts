/**
 * `npm run demo` (`bun examples/demo.ts [--keep]`): the library on a copy of
 * examples/site/ in a temp dir, through LocalShell (the same remote
 * programs an SSH host runs, here with the local /bin/sh).
 *
 * 1. A real multi-file patch (examples/demo.patch): an Update with `@@`
 *    anchors, a Move with an edit, an Update of a CRLF file that stays CRLF,
 *    an Add in a new directory.
 * 2. A conflict: plan, then another writer changes a file, then commit →
 *    `conflict`, and nothing of the batch is changed.
 * 3. An ambiguous chunk (it matches both loops of assets/menu.js) →
 *    `ambiguous_hunk` with `N:hh` candidates; the same chunk with an
 *    `@@ function renderSpecials(list) {` anchor applies.
 *
 * Every step checks its own outcome, so the demo doubles as a smoke test:
 * exit 0 when everything behaved as described, 1 otherwise.
 *
 * @module
 */
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyPatch, commitRemote, LocalShell, parsePatch, patchPaths, planPatch, readSnapshots, sha256Hex } from "../mod.ts";
import { formatFailure, formatReport, shortSha } from "./cli/report_text.ts";

const SITE = fileURLToPath(new URL("./site/", import.meta.url));
const DEMO_PATCH = fileURLToPath(new URL("./demo.patch", import.meta.url));

const CONFLICT_PATCH = `*** Begin Patch
*** Update File: index.html
@@
-    <p class="tagline">Coffee by the water since 1998</p>
+    <p class="tagline">Coffee and cinnamon buns by the water since 1998</p>
*** Update File: site.conf
@@
-    listen 80;
+    listen 8080;
*** End Patch`;

/** One chunk that fits renderMenu and renderSpecials alike. */
const AMBIGUOUS_PATCH = `*** Begin Patch
*** Update File: assets/menu.js
@@
     const li = document.createElement("li");
-    li.textContent = item.name + " — " + formatPrice(item.price);
+    li.textContent = "★ " + item.name + " — " + formatPrice(item.price);
*** End Patch`;

/** The same chunk, with an anchor that says which function it is in. */
const ANCHORED_PATCH = AMBIGUOUS_PATCH.replace("@@\n", "@@ function renderSpecials(list) {\n");

const shell = new LocalShell();
const problems: string[] = [];

/** Print a check and remember it when it failed. */
function check(ok: boolean, what: string): void {
  console.log(`${ok ? "  ✓" : "  ✗ UNEXPECTED:"} ${what}`);
  if (!ok) problems.push(what);
}

function heading(text: string): void {
  console.log(`\n${"=".repeat(72)}\n${text}\n${"=".repeat(72)}`);
}

function read(root: string, path: string): Buffer {
  return readFileSync(join(root, path));
}

/** Every `.sap-` name left in the tree (stages, backups, locks): should be none. */
function leftovers(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((p) => p.split("/").some((part) => part.startsWith(".sap-")));
}

async function realCommit(root: string): Promise<void> {
  heading("1. A real multi-file patch (examples/demo.patch)");
  console.log("Update index.html (three chunks, two @@ anchors), rename assets/style.css to assets/site.css");
  console.log("with an edit, edit the CRLF nginx config site.conf (mode 0640), add docs/CHANGES.md.\n");
  chmodSync(join(root, "site.conf"), 0o640);
  const report = await applyPatch(shell, { root, patch: readFileSync(DEMO_PATCH, "utf8") });
  console.log(formatReport(report, `local ${root}`));
  check(report.ok && report.files.length === 4, "the patch was applied: 4 files, one commit");
  const conf = read(root, "site.conf").toString("utf8");
  const lines = conf.split("\n").slice(0, -1);
  check(lines.length === 7 && lines.every((line) => line.endsWith("\r")), `site.conf kept its CRLF endings on all ${lines.length} lines, the two new ones included`);
  check((statSync(join(root, "site.conf")).mode & 0o777) === 0o640, "site.conf kept its mode 0640");
  const renamed = !readdirSync(join(root, "assets")).includes("style.css") && read(root, "assets/site.css").includes("#specials h2");
  check(renamed, "assets/style.css is gone, assets/site.css holds the edited stylesheet");
  check(leftovers(root).length === 0, "no stage, backup or lock file was left behind");
  console.log(`\nAtomicity "${report.atomicity}": the whole batch was checked before the first byte`);
  console.log("changed; then each file was replaced by a rename, so each is all-old or all-new.");
}

async function conflict(root: string): Promise<void> {
  heading("2. A conflict: a file changes between plan and commit");
  const parsed = parsePatch(CONFLICT_PATCH);
  if (!parsed.ok) return check(false, `the conflict patch parses (${parsed.errors[0]!.message})`);
  const snapshots = await readSnapshots(shell, root, patchPaths(parsed.patch));
  const planned = planPatch(parsed.patch, snapshots);
  if (!planned.ok) return check(false, `the conflict patch plans (${planned.errors[0]!.message})`);
  const before = { index: sha256Hex(read(root, "index.html")), conf: sha256Hex(read(root, "site.conf")) };
  console.log(`Planned index.html ${shortSha(before.index)} and site.conf ${shortSha(before.conf)} (parsePatch, readSnapshots, planPatch).`);

  // Someone else saves index.html after we planned and before we commit.
  const theirs = read(root, "index.html").toString("utf8").replace("&copy; 2024", "&copy; 2025");
  writeFileSync(join(root, "index.html"), theirs);
  console.log(`Another writer changes index.html (footer 2024 → 2025): now ${shortSha(sha256Hex(theirs))}.`);
  console.log("commitRemote re-checks every file under its locks before touching any:\n");

  const report = await commitRemote(shell, root, planned.plan);
  (report.errors ?? []).forEach((e, i) => console.log(formatFailure(e, i + 1)));
  console.log("");
  check(!report.ok && report.errors?.some((e) => e.code === "conflict" && e.path === "index.html") === true, "commitRemote refused with conflict on index.html");
  check(read(root, "index.html").toString("utf8") === theirs, "index.html holds the other writer's version, untouched by us");
  check(sha256Hex(read(root, "site.conf")) === before.conf, "site.conf is unchanged too: one conflict stops the whole batch");
  check(leftovers(root).length === 0, "no stage, backup or lock file was left behind");

  const retry = await applyPatch(shell, { root, patch: CONFLICT_PATCH });
  check(retry.ok, "conflict is retryable: the same patch sent again re-reads both files and applies");
}

async function ambiguity(root: string): Promise<void> {
  heading("3. An ambiguous chunk, and the anchor that fixes it");
  console.log("assets/menu.js has two functions with the same loop body. This chunk fits both:\n");
  console.log(indent(AMBIGUOUS_PATCH));
  const before = sha256Hex(read(root, "assets/menu.js"));
  const refused = await applyPatch(shell, { root, patch: AMBIGUOUS_PATCH });
  console.log("");
  (refused.errors ?? []).forEach((e, i) => console.log(formatFailure(e, i + 1)));
  console.log("");
  const failure = refused.errors?.[0];
  check(failure?.code === "ambiguous_hunk" && failure.candidates?.length === 2, "refused with ambiguous_hunk listing both places as N:hh ids, never the first silently");
  check(sha256Hex(read(root, "assets/menu.js")) === before, "assets/menu.js is unchanged");

  console.log("\nThe corrected patch names the function with an @@ anchor:\n");
  console.log(indent(ANCHORED_PATCH));
  const fixed = await applyPatch(shell, { root, patch: ANCHORED_PATCH });
  console.log("");
  console.log(fixed.ok ? fixed.files[0]!.diff.trimEnd() : (fixed.errors ?? []).map((e, i) => formatFailure(e, i + 1)).join("\n"));
  console.log("");
  const js = read(root, "assets/menu.js").toString("utf8");
  const inSpecials = js.split("★").length === 2 && js.indexOf("★") > js.indexOf("function renderSpecials");
  check(fixed.ok && inSpecials, "applied inside renderSpecials only; renderMenu untouched");
}

function indent(text: string): string {
  return text.split("\n").map((line) => "    " + line).join("\n");
}

const keep = process.argv.includes("--keep");
const root = mkdtempSync(join(tmpdir(), "sap-demo-"));
cpSync(SITE, root, { recursive: true });
console.log("ssh-apply-patch demo");
console.log(`Working on a copy of examples/site/ in ${root}${keep ? " (kept: --keep)" : " (removed at the end; --keep keeps it)"}.`);
try {
  await realCommit(root);
  await conflict(root);
  await ambiguity(root);
} catch (error) {
  check(false, `the demo crashed: ${(error as Error).stack ?? error}`);
} finally {
  if (!keep) rmSync(root, { recursive: true, force: true });
}
heading("Summary");
if (problems.length === 0) {
  console.log("Everything behaved as described: a real commit, a conflict that changed nothing, and an");
  console.log("ambiguity reported with its candidates and fixed with an anchor.");
} else {
  console.log(`${problems.length} step(s) did not behave as expected:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
}
console.log(keep ? `The files are still in ${root}.` : "The temp copy was removed.");
process.exitCode = problems.length === 0 ? 0 : 1;
