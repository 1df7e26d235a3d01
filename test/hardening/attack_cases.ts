/**
 * The attack corpus (campaign 6), one row per attack. Each row is run
 * against a fresh root next to a sentinel tree ("outside") that must not
 * change, with a canary file name that any executed injection would
 * create. `CANARY` in a row's text is replaced by that name; `{OUT}` by the
 * absolute path of the outside directory.
 *
 * Decisions recorded here (SPEC §6 is silent on them):
 * - a hard link inside the root to a file outside it is a legal regular
 *   file: an update replaces the name by rename (the outside name keeps the
 *   old bytes, the inode is never written) and warns `hard_link_broken`; a
 *   delete removes only the inside name;
 * - names that merely look dangerous (`%2e%2e`, `…`, fullwidth dots, `-rf`,
 *   `$(…)`, `*`) are ordinary names and are created literally;
 * - a root that is itself a symlink is followed once (the operator chose
 *   it); everything below is judged against where it really is.
 *
 * @module
 */
import type { FailureCode, WarningCode } from "../../lib/types.ts";

/** What the root holds before the attack. */
export type Entry =
  | string
  | { file: string; mode: number }
  | { symlink: string }
  | { hardlinkTo: string }
  | { dir: true }
  | { fifo: true };

/** What must happen. */
export type Expectation =
  /** Refused with one of these codes as the first error; nothing below the root changes. */
  | { refused: FailureCode[] }
  /** Applied; these paths (root-relative) hold exactly this text afterwards (null: absent). */
  | { applied: Record<string, string | null> }
  /** Either applied as listed or refused cleanly (a platform limit decides). */
  | { appliedOrRefused: Record<string, string | null> };

/** One attack. */
export interface AttackCase {
  name: string;
  /** Root variant: plain, a path with spaces/quotes/`$()`, or a symlink to the real root. */
  root?: "plain" | "odd-name" | "symlink";
  inside?: Record<string, Entry>;
  patch: string;
  /** FAULT INJECTION at a commit hook point: shell code run there ({ROOT} = physical root). */
  hook?: { at: string; code: string };
  /** A fixed operation id (so the attacker can predict the engine's file names). */
  operationId?: string;
  /** Extra files in the sentinel tree (relative to outside). */
  outside?: Record<string, string>;
  /**
   * A directory (root-relative) the attack renames away mid-commit: the
   * engine's temporary files there cannot be found again (it must warn
   * `cleanup_incomplete`); anywhere else they must be gone.
   */
  movedAway?: string;
  /** Warning codes the report must carry. */
  warns?: WarningCode[];
  expect: Expectation;
}

const begin = "*** Begin Patch";
const end = "*** End Patch";
const add = (path: string, ...lines: string[]): string => [begin, `*** Add File: ${path}`, ...lines.map((l) => `+${l}`), end].join("\n");
const update = (path: string, from: string, to: string): string => [begin, `*** Update File: ${path}`, "@@", `-${from}`, `+${to}`, end].join("\n");
const del = (path: string): string => [begin, `*** Delete File: ${path}`, end].join("\n");
const move = (path: string, to: string, from: string, next: string): string =>
  [begin, `*** Update File: ${path}`, `*** Move to: ${to}`, "@@", `-${from}`, `+${next}`, end].join("\n");

const INJECTIONS = [
  "$(touch CANARY)",
  "`touch CANARY`",
  "a;touch CANARY",
  "a|touch CANARY",
  "a&&touch CANARY",
  "a'b\"c'$(touch CANARY)",
  "${IFS}$(touch${IFS}CANARY)",
];

const long = (n: number, c = "n"): string => c.repeat(n);

/** A file large enough to be uploaded as a delta (rebuilt on the host from its old bytes). */
const BIG = Array.from({ length: 2500 }, (_, i) => `big line ${i}: ${"-".repeat(i % 40)}`).join("\n") + "\n";

/** The corpus. */
export const ATTACKS: readonly AttackCase[] = [
  // --- `..` and friends: refused before anything is read -------------------
  { name: "`../x` escapes upwards", patch: add("../CANARY.txt", "x"), expect: { refused: ["invalid_path"] } },
  { name: "`a/../../outside/secret.txt` through a real dir", inside: { "a/keep.txt": "k\n" }, patch: update("a/../../outside/secret.txt", "TOP SECRET", "pwned"), expect: { refused: ["invalid_path"] } },
  { name: "bare `..`", patch: del(".."), expect: { refused: ["invalid_path"] } },
  { name: "trailing `/..`", inside: { "a/keep.txt": "k\n" }, patch: add("a/..", "x"), expect: { refused: ["invalid_path"] } },
  { name: "`./a.txt`", inside: { "a.txt": "a\n" }, patch: update("./a.txt", "a", "b"), expect: { refused: ["invalid_path"] } },
  { name: "`a/./b.txt`", patch: add("a/./b.txt", "x"), expect: { refused: ["invalid_path"] } },
  { name: "`..` as a Move destination", inside: { "a.txt": "a\n" }, patch: move("a.txt", "../moved.txt", "a", "b"), expect: { refused: ["invalid_path"] } },
  { name: "absolute `/etc/passwd`", patch: update("/etc/passwd", "root", "pwned"), expect: { refused: ["invalid_path"] } },
  { name: "absolute `//tmp/CANARY`", patch: add("//tmp/CANARY", "x"), expect: { refused: ["invalid_path"] } },
  { name: "Windows drive `C:\\x`", patch: add("C:\\x", "x"), expect: { refused: ["invalid_path"] } },
  { name: "backslash `..\\..\\x`", patch: add("..\\..\\CANARY", "x"), expect: { refused: ["invalid_path"] } },
  { name: "`%2e%2e/x.txt` stays a literal, harmless name", patch: add("%2e%2e/x.txt", "x"), expect: { applied: { "%2e%2e/x.txt": "x\n" } } },
  { name: "`…/x.txt` (U+2026) is a literal name", patch: add("…/x.txt", "x"), expect: { applied: { "…/x.txt": "x\n" } } },
  { name: "fullwidth `．．/x.txt` is a literal name", patch: add("．．/x.txt", "x"), expect: { applied: { "．．/x.txt": "x\n" } } },
  { name: "`...` and `.. x` are literal names", patch: [begin, "*** Add File: .../a.txt", "+a", "*** Add File: .. x/b.txt", "+b", end].join("\n"), expect: { applied: { ".../a.txt": "a\n", ".. x/b.txt": "b\n" } } },
  // --- control characters and lengths ------------------------------------
  { name: "NUL inside a name", patch: add("a\0b.txt", "x"), expect: { refused: ["invalid_path", "invalid_patch"] } },
  { name: "TAB inside a name", patch: add("a\tb.txt", "x"), expect: { refused: ["invalid_path"] } },
  { name: "ESC / DEL inside names", patch: [begin, "*** Add File: a\u001b[31mb", "+x", "*** Add File: c\u007fd", "+y", end].join("\n"), expect: { refused: ["invalid_path"] } },
  { name: "lone CR inside a name", patch: add("a\rb.txt", "x"), expect: { refused: ["invalid_path", "invalid_patch"] } },
  { name: "component of 256 bytes", patch: add(long(256), "x"), expect: { refused: ["invalid_path"] } },
  { name: "component of 255 bytes (the limit) works", patch: add(long(255), "x"), expect: { applied: { [long(255)]: "x\n" } } },
  { name: "path over 4096 bytes", patch: add(Array(41).fill(long(99)).join("/") + "/" + long(37), "x"), expect: { refused: ["invalid_path"] } },
  { name: "path of 3999 bytes (deep; a long absolute path on the host)", patch: add(Array(39).fill(long(99, "d")).join("/") + "/" + long(99, "f"), "x"), expect: { appliedOrRefused: { [Array(39).fill(long(99, "d")).join("/") + "/" + long(99, "f")]: "x\n" } } },
  { name: "reserved `.sap-` names (engine files)", inside: { "a.txt": "a\n" }, patch: [begin, "*** Add File: .sap-lock-0000000000000000", "+x", "*** Update File: a.txt", "*** Move to: d/.sap-x-0.stage", "@@", "-a", "+b", end].join("\n"), expect: { refused: ["invalid_path"] } },
  // --- symlinks -----------------------------------------------------------
  { name: "symlinked directory pointing outside (update through it)", inside: { lnk: { symlink: "{OUT}" } }, patch: update("lnk/secret.txt", "TOP SECRET", "pwned"), expect: { refused: ["symlink_rejected"] } },
  { name: "symlinked directory pointing outside (add through it)", inside: { lnk: { symlink: "{OUT}" } }, patch: add("lnk/CANARY.txt", "x"), expect: { refused: ["symlink_rejected"] } },
  { name: "symlinked directory pointing inside the root", inside: { "sub/a.txt": "a\n", inlnk: { symlink: "sub" } }, patch: update("inlnk/a.txt", "a", "b"), expect: { refused: ["symlink_rejected"] } },
  { name: "dangling symlinked directory", inside: { dang: { symlink: "{OUT}/not-yet" } }, patch: add("dang/x.txt", "x"), expect: { refused: ["symlink_rejected"] } },
  { name: "final symlink to an outside file: update", inside: { "sl.txt": { symlink: "{OUT}/secret.txt" } }, patch: update("sl.txt", "TOP SECRET", "pwned"), expect: { refused: ["symlink_rejected"] } },
  { name: "final symlink to an outside file: delete", inside: { "sl.txt": { symlink: "{OUT}/secret.txt" } }, patch: del("sl.txt"), expect: { refused: ["symlink_rejected"] } },
  { name: "final dangling symlink: add over it", inside: { "dl.txt": { symlink: "{OUT}/created-by-attack" } }, patch: add("dl.txt", "x"), expect: { refused: ["symlink_rejected", "already_exists"] } },
  { name: "Move destination through a symlinked directory", inside: { "a.txt": "a\n", lnk: { symlink: "{OUT}" } }, patch: move("a.txt", "lnk/a.txt", "a", "b"), expect: { refused: ["symlink_rejected"] } },
  { name: "deeper symlinked component (`d/e/lnk/f`)", inside: { "d/e/lnk": { symlink: "{OUT}/dir" } }, patch: update("d/e/lnk/inner.txt", "inner", "pwned"), expect: { refused: ["symlink_rejected"] } },
  {
    name: "directory swapped for a symlink to outside after the snapshot (hook after staging)",
    inside: { "sub/f.txt": "same\n" },
    patch: update("sub/f.txt", "same", "changed"),
    hook: { at: "staged:", code: "mv {ROOT}/sub {ROOT}/sub.real && ln -s {OUT}/twin {ROOT}/sub" },
    movedAway: "sub.real",
    expect: { refused: ["symlink_rejected", "conflict"] },
  },
  {
    name: "directory swapped for a symlink to an identical copy outside, after the path checks (hook)",
    inside: { "sub/f.txt": "same\n" },
    patch: update("sub/f.txt", "same", "changed"),
    hook: { at: "checked:", code: "mv {ROOT}/sub {ROOT}/sub.real && ln -s {OUT}/twin {ROOT}/sub" },
    movedAway: "sub.real",
    expect: { refused: ["remote_error", "conflict", "symlink_rejected"] },
  },
  {
    name: "directory swapped for a symlink to an identical copy outside, right before the rename (hook)",
    inside: { "sub/f.txt": "same\n" },
    patch: update("sub/f.txt", "same", "changed"),
    hook: { at: "compared:", code: "mv {ROOT}/sub {ROOT}/sub.real && ln -s {OUT}/twin {ROOT}/sub" },
    movedAway: "sub.real",
    expect: { refused: ["remote_error", "conflict", "symlink_rejected"] },
  },
  {
    name: "directory swapped after staging, with a decoy named like the stage waiting outside (cleanup must not follow the swap)",
    inside: { "sub/f.txt": "same\n" },
    operationId: "attack_op",
    outside: { "twin/.sap-attack_op-0.stage": "decoy: deleting me would be an escape\n" },
    patch: update("sub/f.txt", "same", "changed"),
    hook: { at: "staged:", code: "mv {ROOT}/sub {ROOT}/sub.real && ln -s {OUT}/twin {ROOT}/sub" },
    movedAway: "sub.real",
    expect: { refused: ["symlink_rejected", "conflict"] },
  },
  {
    name: "the engine's own stage swapped for a symlink to an outside file before the mode is copied (hook)",
    inside: { "run.sh": { file: "echo old\n", mode: 0o750 } },
    operationId: "attack_meta",
    patch: update("run.sh", "echo old", "echo new"),
    // white box: the stage s0 in the root's private directory (directory 0); nobody but
    // the engine can reach it there, so the hook (running as the engine) plays the swap
    hook: { at: "checked:", code: "sap_pcd 0 && rm -f ./s0 && ln -s {OUT}/secret.txt ./s0" },
    expect: { refused: ["remote_error", "conflict"] },
  },
  {
    name: "file swapped for a symlink to an outside file after the snapshot (hook)",
    inside: { "f.txt": "same\n" },
    patch: update("f.txt", "same", "changed"),
    hook: { at: "staged:", code: "rm {ROOT}/f.txt && ln -s {OUT}/twin/f.txt {ROOT}/f.txt" },
    expect: { refused: ["conflict", "symlink_rejected"] },
  },
  {
    name: "delta upload: a large source swapped for a symlink to an identical outside copy just before it is pinned (hook)",
    inside: { "big.txt": BIG },
    outside: { "big.txt": BIG },
    patch: update("big.txt", "big line 1200: " + "-".repeat(1200 % 40), "pwned"),
    hook: { at: "delta_pin:0", code: "rm {ROOT}/big.txt && ln -s {OUT}/big.txt {ROOT}/big.txt" },
    expect: { refused: ["conflict", "symlink_rejected"] },
  },
  {
    name: "delta upload: a large source swapped for a symlink to an identical outside copy after its stage was rebuilt, under the locks (hook)",
    inside: { "big.txt": BIG },
    outside: { "big.txt": BIG },
    patch: update("big.txt", "big line 1200: " + "-".repeat(1200 % 40), "pwned"),
    hook: { at: "locked:", code: "rm {ROOT}/big.txt && ln -s {OUT}/big.txt {ROOT}/big.txt" },
    expect: { refused: ["conflict", "symlink_rejected"] },
  },
  {
    name: "delta upload: the source's directory swapped for a symlink to an identical outside copy just before the pin (hook)",
    inside: { "sub/big.txt": BIG },
    outside: { "twin2/big.txt": BIG },
    patch: update("sub/big.txt", "big line 1200: " + "-".repeat(1200 % 40), "pwned"),
    hook: { at: "delta_pin:0", code: "mv {ROOT}/sub {ROOT}/sub.real && ln -s {OUT}/twin2 {ROOT}/sub" },
    movedAway: "sub.real",
    expect: { refused: ["conflict", "symlink_rejected"] },
  },
  // --- hard links ---------------------------------------------------------
  { name: "hard link to an outside file: update replaces the inside name only", inside: { "hl.txt": { hardlinkTo: "secret.txt" } }, patch: update("hl.txt", "TOP SECRET", "inside only"), expect: { applied: { "hl.txt": "inside only\n" } }, warns: ["hard_link_broken"] },
  { name: "hard link to an outside file: delete removes the inside name only", inside: { "hl.txt": { hardlinkTo: "secret.txt" } }, patch: del("hl.txt"), expect: { applied: { "hl.txt": null } } },
  // --- shell syntax in names and contents ---------------------------------
  ...INJECTIONS.map((name): AttackCase => ({ name: `name ${JSON.stringify(name)} is created literally`, patch: add(name, "x"), expect: { applied: { [name]: "x\n" } } })),
  { name: "glob characters `*`, `?`, `[a]` as names (update and delete among look-alikes)", inside: { "*": "star\n", "a": "plain a\n", "?": "q\n", "[a]": "br\n" }, patch: [begin, "*** Update File: *", "@@", "-star", "+STAR", "*** Delete File: ?", "*** Update File: [a]", "@@", "-br", "+BR", end].join("\n"), expect: { applied: { "*": "STAR\n", "?": null, "[a]": "BR\n", "a": "plain a\n" } } },
  { name: "option-like names `-rf`, `--help`, `-`", inside: { "--help": "h\n", "-": "dash\n" }, patch: [begin, "*** Add File: -rf", "+r", "*** Update File: --help", "@@", "-h", "+H", "*** Delete File: -", end].join("\n"), expect: { applied: { "-rf": "r\n", "--help": "H\n", "-": null } } },
  { name: "option-like directories `-n/-e.txt`", patch: add("-n/-e.txt", "x"), expect: { applied: { "-n/-e.txt": "x\n" } } },
  { name: "`$HOME`, `~`, `$$` names stay literal", patch: [begin, "*** Add File: $HOME", "+h", "*** Add File: ~", "+t", "*** Add File: $$", "+p", end].join("\n"), expect: { applied: { "$HOME": "h\n", "~": "t\n", "$$": "p\n" } } },
  {
    name: "contents carrying shell syntax stay byte-exact",
    inside: { "c.txt": "keep\n" },
    patch: [begin, "*** Add File: payload.sh", "+$(touch /tmp/CANARY)", "+`touch CANARY`", "+'; touch CANARY; '", "+\"$(touch CANARY)\"", "+a\\nb\\", "+| && ; > < >>", "*** Update File: c.txt", "@@", "-keep", "+$(touch CANARY) `touch CANARY` \\ ' \"", end].join("\n"),
    expect: { applied: { "payload.sh": "$(touch /tmp/CANARY)\n`touch CANARY`\n'; touch CANARY; '\n\"$(touch CANARY)\"\na\\nb\\\n| && ; > < >>\n", "c.txt": "$(touch CANARY) `touch CANARY` \\ ' \"\n" } },
  },
  { name: "a dot-file name (`.bashrc`) is an ordinary name", patch: add(".bashrc", "echo hi"), expect: { applied: { ".bashrc": "echo hi\n" } } },
  // --- roots --------------------------------------------------------------
  { name: "root path with spaces, quotes and `$(…)`", root: "odd-name", inside: { "a.txt": "a\n" }, patch: update("a.txt", "a", "b"), expect: { applied: { "a.txt": "b\n" } } },
  { name: "root that is itself a symlink (followed once)", root: "symlink", inside: { "a.txt": "a\n" }, patch: update("a.txt", "a", "b"), expect: { applied: { "a.txt": "b\n" } } },
  { name: "root that is a symlink, with a symlinked component below it", root: "symlink", inside: { lnk: { symlink: "{OUT}" } }, patch: add("lnk/CANARY", "x"), expect: { refused: ["symlink_rejected"] } },
  // --- kinds that are not regular files -----------------------------------
  { name: "a FIFO is refused without blocking on it", inside: { pipe: { fifo: true } }, patch: update("pipe", "a", "b"), expect: { refused: ["not_regular_file"] } },
  { name: "a directory where a file is expected", inside: { "sub/x.txt": "x\n" }, patch: update("sub", "a", "b"), expect: { refused: ["not_regular_file"] } },
  { name: "Add over an existing directory", inside: { "sub/x.txt": "x\n" }, patch: add("sub", "x"), expect: { refused: ["already_exists", "not_regular_file"] } },
  { name: "a file used as a directory (`a.txt/b`)", inside: { "a.txt": "a\n" }, patch: add("a.txt/b", "x"), expect: { refused: ["invalid_path", "not_regular_file"] } },
];
