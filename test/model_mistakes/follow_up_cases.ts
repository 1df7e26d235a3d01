/**
 * Model mistakes that must be recovered in one follow-up call (issue 29
 * item 7), as a table: test/model_mistakes/follow_up.test.ts runs every row
 * through the example server over stdio and HTTP, on local and SSH roots
 * (follow_up_harness.ts), counts the calls until the file is right and
 * asserts at most 2 (the mistake and one follow-up) and the exact files.
 *
 * Adding a row:
 * - `id`: a new root name (unique; it is the case's root in every server).
 *   Calls without a `root` argument get it added; set `root` yourself to
 *   send a wrong one (`root: undefined` sends none).
 * - `files`: the root before the mistake; `otherRoots` for more roots
 *   (they must end unchanged); `setup`: earlier calls (a read_file whose
 *   answer the mistaken call uses) and writes of another writer, not
 *   counted.
 * - `first`: the mistaken call, exactly as a model sent it (or a function
 *   of the setup answers, e.g. a sha256 it read); `firstCode`: the code of
 *   the failure it gets (it must fail).
 * - `model(answer, sent)`: builds the next call from the answer's `text`,
 *   `structured` and `errors` and the call it sent — never from the row's
 *   files or expectation: the row must fail when the failure stops naming
 *   the fix. Give up with `null` when the answer does not say what to do.
 * - `expect`: every file of the root afterwards (bytes for non-UTF-8).
 * Check the new row fails without the change it covers.
 *
 * @module
 */
import type { FollowUpCase } from "./follow_up_harness.ts";
import { firstError, lineAfter, patchOf, resend, withoutId } from "./follow_up_harness.ts";

const TWINS = "def a():\n    x = 1\n    return x\n\ndef b():\n    x = 1\n    return x * 2\n";
const INI = "[server]\nhost = 0.0.0.0\ntimeout = 60\n\n[db]\nname = main\n";
const HANDLER = "import os\n\ndef handle(req):\n    return 1\n\ndef other():\n    return 2\n";
const NGINX = "server {\n    listen 80;\n    server_name example.org;\n    root /srv/site;\n}\n";

/** Text as single-byte bytes (every character below U+0100). */
const latin1 = (text: string): Uint8Array => Uint8Array.from([...text].map((c) => c.charCodeAt(0)));
const KUNDE = latin1("[kunde]\r\nname = Müller\r\nstadt = Köln\r\n");
// windows-1252: “Café” (0x93 … 0x94).
const MENU = Uint8Array.from([...latin1("title = "), 0x93, ...latin1("Café"), 0x94, ...latin1("\nprice = 5 EUR\n")]);

/** The encoding a failure's text tells a model to send (the MCP words for the hint). */
function encodingSaid(answer: { text: string }): string | null {
  return /the argument "encoding": "([a-z0-9-]+)"/.exec(answer.text)?.[1] ?? null;
}

/** The patch's lines of a call, for models that edit what they sent. */
function lines(sent: { arguments: Record<string, unknown> }): string[] {
  return String(sent.arguments.patch).split("\n");
}

export const FOLLOW_UPS: FollowUpCase[] = [
  // Rows whose mistake is the root come first: a server checks at most 8 roots for a call's paths
  // (examples/mcp/root_probe.ts), and the harness configures the roots in table order.
  {
    id: "webapp-prod",
    why: "a root name the model guessed: the failure names the configured root that holds the path",
    firstCode: "invalid_argument",
    files: { "deploy/unknown-root.conf": "workers = 2\n" },
    first: { tool: "apply_patch", arguments: { root: "webapp", patch: patchOf("*** Update File: deploy/unknown-root.conf", "@@", "-workers = 2", "+workers = 8") } },
    model: (answer, sent) => {
      const root = firstError(answer)?.suggested_root;
      return root === undefined ? null : resend(sent, { root });
    },
    expect: { "deploy/unknown-root.conf": "workers = 8\n" },
  },
  {
    id: "root-as-dir",
    why: "a root's name as the first segment of the path, and no root argument: the failure names the root and the path below it",
    firstCode: "invalid_argument",
    files: { "settings.ini": "debug = true\n" },
    first: { tool: "apply_patch", arguments: { root: undefined, patch: patchOf("*** Update File: root-as-dir/settings.ini", "@@", "-debug = true", "+debug = false") } },
    // The model drops the prefix the failure names from its paths.
    model: (answer, sent) => {
      const root = firstError(answer)?.suggested_root;
      if (root === undefined || !answer.text.includes(`without their "${root}/"`)) return null;
      const patch = lines(sent).map((l) => l.replace(new RegExp(`^(\\*\\*\\* (?:Update|Add|Delete) File: )${root}/`), "$1")).join("\n");
      return resend(sent, { root, patch });
    },
    expect: { "settings.ini": "debug = false\n" },
  },
  {
    id: "read-root-prefix",
    why: "read_file with a root that does not exist and the real root's name as the path's first segment: the failure gives both arguments",
    firstCode: "invalid_argument",
    files: { "notes.txt": "remember the milk\n" },
    first: { tool: "read_file", arguments: { root: "docs", path: "read-root-prefix/notes.txt" } },
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.suggested_root === undefined || e.suggested_path === undefined) return null;
      return resend(sent, { root: e.suggested_root, path: e.suggested_path });
    },
    // A read changes nothing: recovered when the second call reads the file.
    expect: { "notes.txt": "remember the milk\n" },
  },
  {
    id: "ambiguous-context",
    why: "the peer edited the wrong one of two same-shape functions: the failure names a line that singles out each",
    firstCode: "ambiguous_hunk",
    files: { "calc.py": TWINS },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: calc.py", "@@", "-    x = 1", "+    x = 10") } },
    // The model meant b's x (the second place): it adds the context line the example names for it.
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "ambiguous_hunk") return null;
      const place = e.candidates?.find((c) => c.enclosing?.text === "def b():");
      if (place === undefined) return null;
      const label = `to select the match at line ${place.line}, add the line `;
      const rest = lineAfter(answer.text, label);
      const m = rest === null ? null : /^(below|above) it as context: (.*)$/.exec(rest);
      if (m === null) return null;
      const context = " " + withoutId(m[2]!);
      const patch = lines(sent);
      const at = patch.indexOf("+    x = 10");
      if (m[1] === "below") patch.splice(at + 1, 0, context);
      else patch.splice(patch.indexOf("-    x = 1"), 0, context);
      return resend(sent, { patch: patch.join("\n") });
    },
    expect: { "calc.py": TWINS.replace("    x = 1\n    return x * 2", "    x = 10\n    return x * 2") },
  },
  {
    id: "ambiguous-anchor",
    why: "two same-shape functions: the enclosing block of each candidate is an @@ anchor",
    firstCode: "ambiguous_hunk",
    files: { "calc.py": TWINS },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: calc.py", "@@", "-    x = 1", "+    x = -1") } },
    // The model meant b's x: it anchors the chunk on the block the failure says that candidate is in.
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "ambiguous_hunk") return null;
      const place = e.candidates?.find((c) => c.enclosing?.text === "def b():");
      if (place?.enclosing === undefined) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l === "@@" ? `@@ ${place.enclosing!.text}` : l)).join("\n") });
    },
    expect: { "calc.py": TWINS.replace("def b():\n    x = 1", "def b():\n    x = -1") },
  },
  {
    id: "anchor-typo",
    why: "an @@ anchor the model misremembered: the failure shows the similar line to put after @@",
    firstCode: "anchor_not_found",
    files: { "handler.py": HANDLER },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: handler.py", "@@ def handler(req):", "-    return 1", "+    return 3") } },
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "anchor_not_found" || e.candidates?.length !== 1) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l.startsWith("@@ ") ? `@@ ${e.candidates![0]!.text}` : l)).join("\n") });
    },
    expect: { "handler.py": HANDLER.replace("return 1", "return 3") },
  },
  {
    id: "anchor-after-change",
    why: "an @@ anchor placed after the change was reported as out_of_order_hunk: its own code names the anchor to use instead",
    firstCode: "anchor_after_change",
    files: { "handler.py": HANDLER },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: handler.py", "@@ def other():", "-    return 1", "+    return 3") } },
    model: (answer, sent) => {
      if (firstError(answer)?.code !== "anchor_after_change") return null;
      const rest = lineAfter(answer.text, "move the @@ line above the change: use @@ ");
      const anchor = rest === null ? null : /^(.*) \(line \d+, [^)]*\), or drop the @@ line\.$/.exec(rest)?.[1];
      if (anchor == null) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l.startsWith("@@ ") ? `@@ ${anchor}` : l)).join("\n") });
    },
    expect: { "handler.py": HANDLER.replace("return 1", "return 3") },
  },
  {
    id: "stale-context",
    why: "a chunk written from memory: the failure shows the file's lines there, to copy into the chunk",
    firstCode: "context_mismatch",
    files: { "app.ini": INI },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: app.ini", "@@", " [server]", " host = 0.0.0.0", "-timeout = 30", "+timeout = 90") } },
    // The chunk's context and '-' lines, position by position, become the file's lines of the closest region.
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "context_mismatch" || e.closest === undefined) return null;
      const shown = e.closest.lines.map((l) => l.text);
      let i = 0;
      const patch = lines(sent).map((l) => (l.startsWith(" ") || (l.startsWith("-") && !l.startsWith("---")) ? l[0] + (shown[i++] ?? l.slice(1)) : l));
      if (i !== shown.length) return null;
      return resend(sent, { patch: patch.join("\n") });
    },
    expect: { "app.ini": INI.replace("timeout = 60", "timeout = 90") },
  },
  {
    id: "window-sha",
    why: "content_sha256 of a read window sent as expected_sha256: the failure gives the file_sha256 to resend with",
    firstCode: "precondition_failed",
    files: { "site.conf": NGINX },
    setup: [{ call: { tool: "read_file", arguments: { path: "site.conf", offset: 2, limit: 2 } } }],
    first: (seen) => ({
      tool: "apply_patch",
      arguments: {
        patch: patchOf("*** Update File: site.conf", "@@", "-    listen 80;", "+    listen 8080;"),
        expected_sha256: { "site.conf": String(seen[0]!.structured.content_sha256) },
      },
    }),
    model: (answer, sent) => {
      const e = firstError(answer);
      const hint = e?.code === "precondition_failed" ? e.hints?.find((h) => h.kind === "expected_sha256") : undefined;
      if (hint?.kind !== "expected_sha256" || hint.sha256 === null) return null;
      return resend(sent, { expected_sha256: { [hint.path]: hint.sha256 } });
    },
    expect: { "site.conf": NGINX.replace("listen 80;", "listen 8080;") },
  },
  {
    id: "path-case",
    why: "wrong path casing (src/Parse.ts for src/parse.ts): the failure leads with the existing file and the exact header to write (issue 29.1)",
    firstCode: "not_found",
    files: { "src/parse.ts": "export const depth = 1;\n" },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: src/Parse.ts", "@@", "-export const depth = 1;", "+export const depth = 2;") } },
    // The model takes the header the failure tells it to write.
    model: (answer, sent) => {
      const e = firstError(answer);
      const m = e?.code === "not_found" ? /^not_found: did you mean `[^`]+`\? Write the section header as "(\*\*\* Update File: [^"]+)"/.exec(e.message) : null;
      if (m === null || answer.text.includes("*** Add File:")) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l.startsWith("*** Update File: ") ? m[1]! : l)).join("\n") });
    },
    expect: { "src/parse.ts": "export const depth = 2;\n" },
  },
  {
    id: "stale-read-applies",
    why: "a stale read whose chunk still applies: the failure carries current_sha256 and shows what the other writer changed, so one resend applies it (issue 29.3)",
    firstCode: "precondition_failed",
    files: { "site.conf": NGINX },
    setup: [
      { call: { tool: "read_file", arguments: { path: "site.conf" } } },
      { write: { "site.conf": NGINX.replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n") } },
    ],
    first: (seen) => ({
      tool: "apply_patch",
      arguments: {
        patch: patchOf("*** Update File: site.conf", "@@", "-    listen 80;", "+    listen 8080;"),
        expected_sha256: { "site.conf": String(seen[0]!.structured.file_sha256) },
      },
    }),
    // The model checks what changed (shown, since the server read that version) and resends with the current SHA-256.
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "precondition_failed" || e.current_sha256 === undefined) return null;
      if (!answer.text.includes("What changed since your read") || !answer.text.includes("+    index index.html;")) return null;
      return resend(sent, { expected_sha256: { [e.path!]: e.current_sha256 } });
    },
    expect: { "site.conf": NGINX.replace("listen 80;", "listen 8080;").replace("    root /srv/site;\n", "    root /srv/site;\n    index index.html;\n") },
  },
  {
    id: "tiny-file-whole",
    why: "a chunk that matches nothing in a 3-line file: the whole file is in the failure, so the chunk is rebuilt without a read (issue 29.4)",
    firstCode: "context_mismatch",
    files: { ".tool-versions": "nodejs 20.11.0\npython 3.12.1\nterraform 1.7.4\n" },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: .tool-versions", "@@", "-node = \"20\"", "+node = \"22\"") } },
    // The model finds its line among the file's lines shown whole and rewrites the chunk from it.
    model: (answer, sent) => {
      const e = firstError(answer);
      if (e?.code !== "context_mismatch") return null;
      const shown = answer.text.split("The whole file (")[1]?.split("\n").slice(1).filter((l) => /^\s+\d+:[0-9a-f]{2}  /.test(l)).map(withoutId) ?? [];
      const node = shown.find((l) => l.startsWith("nodejs "));
      if (node === undefined) return null;
      return resend(sent, { patch: patchOf("*** Update File: .tool-versions", "@@", `-${node}`, "+nodejs 22.1.0") });
    },
    expect: { ".tool-versions": "nodejs 22.1.0\npython 3.12.1\nterraform 1.7.4\n" },
  },
  {
    id: "add-over-existing",
    why: "models rewrite small files whole: an Add of an existing file names the one-step rewrite (*** Replace File:) to put in its place",
    firstCode: "already_exists",
    files: { "app.ini": INI },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Add File: app.ini", "+[server]", "+host = 127.0.0.1") } },
    model: (answer, sent) => {
      const e = firstError(answer);
      const m = e?.code === "already_exists" ? /write "(\*\*\* Replace File: [^"]+)" in place of the Add header/.exec(answer.text) : null;
      if (m === null) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l.startsWith("*** Add File: ") ? m[1]! : l)).join("\n") });
    },
    expect: { "app.ini": "[server]\nhost = 127.0.0.1\n" },
  },
  {
    id: "replace-missing",
    why: "a whole-file replace of a file that is not there: the failure names the Add header to use instead",
    firstCode: "not_found",
    files: { "keep.txt": "x\n" },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Replace File: conf/new.ini", "+a = 1") } },
    model: (answer, sent) => {
      const e = firstError(answer);
      const m = e?.code === "not_found" ? /use "(\*\*\* Add File: [^"]+)" with the same "\+" lines/.exec(answer.text) : null;
      if (m === null) return null;
      return resend(sent, { patch: lines(sent).map((l) => (l.startsWith("*** Replace File: ") ? m[1]! : l)).join("\n") });
    },
    expect: { "keep.txt": "x\n", "conf/new.ini": "a = 1\n" },
  },
  {
    id: "latin1-read",
    why: "non-UTF-8 files (latin-1) are refused clearly but cannot be read at all: the failure names the encoding argument",
    firstCode: "invalid_utf8",
    files: { "kunde.ini": KUNDE },
    first: { tool: "read_file", arguments: { path: "kunde.ini" } },
    model: (answer, sent) => {
      const encoding = answer.errors[0]?.code === "invalid_utf8" ? encodingSaid(answer) : null;
      return encoding === null ? null : resend(sent, { encoding });
    },
    expect: { "kunde.ini": KUNDE },
  },
  {
    id: "latin1-apply",
    why: "… nor edited: the failure names the encoding argument, and the file is then patched byte-exactly",
    firstCode: "invalid_utf8",
    files: { "kunde.ini": KUNDE },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: kunde.ini", "@@", " name = Müller", "-stadt = Köln", "+stadt = Düsseldorf") } },
    model: (answer, sent) => {
      const encoding = answer.errors[0]?.code === "invalid_utf8" ? encodingSaid(answer) : null;
      return encoding === null ? null : resend(sent, { encoding });
    },
    expect: { "kunde.ini": latin1("[kunde]\r\nname = Müller\r\nstadt = Düsseldorf\r\n") },
  },
  {
    id: "cp1252-euro",
    why: "… a guessed latin1 cannot write €: the failure names windows-1252, in which the file's curly quotes are too",
    firstCode: "unencodable_character",
    files: { "menu.txt": MENU },
    first: { tool: "apply_patch", arguments: { patch: patchOf("*** Update File: menu.txt", "@@", "-price = 5 EUR", "+price = 5 €"), encoding: "latin1" } },
    model: (answer, sent) => {
      const encoding = answer.errors[0]?.code === "unencodable_character" ? encodingSaid(answer) : null;
      return encoding === null ? null : resend(sent, { encoding });
    },
    expect: { "menu.txt": Uint8Array.from([...latin1("title = "), 0x93, ...latin1("Café"), 0x94, ...latin1("\nprice = 5 "), 0x80, 0x0a]) },
  },
];
