/**
 * Issue 12's attacks as deterministic regression tests: another local user
 * (a real second uid, through setpriv) who can write one directory of the
 * root — or the root's parent — plants names, swaps entries for symlinks,
 * FIFOs and back at the exact moment the engine runs a tool (FAULT
 * INJECTION: PATH wrappers make the attacker act with best timing). Each
 * one escaped the root, or made a report lie, before the fix.
 *
 * In `sharedDirectories: "allow"` mode the engine must contain every one
 * (outside tree identical, including owners, modes, link counts and
 * times; nothing of the outside in any snapshot; every report true); in
 * the default mode the same setups are refused `unsafe_directory` before
 * anything is written.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { chownSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { applyPatch } from "../../lib/apply.ts";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import type { LocalShellOptions } from "../../lib/remote/local_shell.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import { shQuote } from "../../lib/remote/shell.ts";
import type { ExecOptions, ExecResult, RemoteShell } from "../../lib/remote/shell.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { ApplyReport } from "../../lib/types.ts";
import { asUser, busyboxUserland, cleanupTemps, HookedShell, leftovers, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { asAttacker, attackBin, attackerPrefix, coTenantTree, digestChanges, filesContaining, loginAccount, treeDigest } from "./co_tenant_fixture.ts";
import type { AttackRule, CoTenantOptions, CoTenantTree } from "./co_tenant_fixture.ts";

afterAll(cleanupTemps, 30_000);

const begin = "*** Begin Patch";
const end = "*** End Patch";
const q = shQuote;
const dash = shellCases().find((c) => c.name === "dash")!;

interface Run {
  t: CoTenantTree;
  report: ApplyReport;
  outsideChanges: string[];
}

/**
 * The engine's own `.sap-` entries left in the root: not the attacker's
 * plants (its names, its symlinks, anything it owns) nor engine entries it
 * renamed away (`*.stolen`, which the engine cannot find again).
 */
function engineLeftovers(t: CoTenantTree, plants: readonly string[]): string[] {
  return leftovers(t.root).filter((p) => {
    if (plants.some((x) => p === join(t.work, x)) || p.includes(".stolen")) return false;
    const st = lstatSync(p);
    return !st.isSymbolicLink() && st.uid !== t.attacker.uid;
  });
}

async function attempt(
  t: CoTenantTree,
  patch: string,
  options: { rules?: AttackRule[]; shell?: LocalShellOptions; allow?: boolean; operationId?: string; timeoutMs?: number } = {},
): Promise<Run> {
  const base = options.shell ?? dash.options;
  const path = base.env?.PATH ?? process.env.PATH!;
  const env = { ...(base.env ?? (process.env as Record<string, string>)) };
  if (options.rules) env.PATH = `${attackBin(t, options.rules, path)}:${path}`;
  const shell = new LocalShell({ ...base, env, cwd: tempDir("sap-cwd-") });
  const before = treeDigest(t.outside);
  const report = await applyPatch(shell, {
    root: t.root,
    patch,
    operationId: options.operationId,
    lockWaitMs: 2000,
    timeoutMs: options.timeoutMs ?? 20_000,
    ...(options.allow === false ? {} : { sharedDirectories: "allow" as const }),
  });
  return { t, report, outsideChanges: digestChanges(before, treeDigest(t.outside)) };
}

const read = (t: CoTenantTree, path: string): string | null => {
  try {
    return lstatSync(join(t.work, path)).isFile() ? readFileSync(join(t.work, path), "utf8") : "<not a file>";
  } catch {
    return null;
  }
};

function expectContained(run: Run): void {
  expect(run.outsideChanges).toEqual([]);
  expect(filesContaining(run.t.root, run.t.marker)).toEqual([]);
  expect(readdirSync(run.t.base).sort()).toEqual(["outside", "root"]);
}

/** Plant a symlink named `name` in the shared directory, as the attacker. */
function plantSymlink(t: CoTenantTree, name: string, target: string): void {
  const r = asAttacker(t, `ln -s ${q(target)} ${q(join(t.work, name))}`);
  if (r.status !== 0) throw new Error(`the attacker could not plant ${name}: ${r.stderr}`);
}

describe("co-tenant attacks, sharedDirectories: allow (the defence in depth)", () => {
  rootTest("a pre-planted .bak symlink to an outside directory does not turn a Delete into a move out of the root", async () => {
    const t = coTenantTree({ files: { "victim.txt": "v\n" } });
    plantSymlink(t, ".sap-co1-0.bak", join(t.outside, "dir"));
    const run = await attempt(t, [begin, "*** Delete File: shared/victim.txt", end].join("\n"), { operationId: "co1" });
    expectContained(run);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "victim.txt")).toBeNull();
    expect(engineLeftovers(t, [".sap-co1-0.bak"])).toEqual([]);
  });

  rootTest("a pre-planted .bak symlink to an outside directory does not move a Move's source out of the root", async () => {
    const t = coTenantTree({ files: { "victim.txt": "v\n" } });
    plantSymlink(t, ".sap-co2-0.bak", join(t.outside, "dir"));
    const run = await attempt(t, [begin, "*** Update File: shared/victim.txt", "*** Move to: shared/moved.txt", "@@", "-v", "+w", end].join("\n"), { operationId: "co2" });
    expectContained(run);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "victim.txt")).toBeNull();
    expect(read(t, "moved.txt")).toBe("w\n");
  });

  rootTest("as the non-root login user: a planted .bak symlink to its ~/.ssh does not let a Delete replace authorized_keys with the other user's content", async () => {
    const login = loginAccount();
    // the login user's file in the shared directory, which the group (the other user) may write
    const t = coTenantTree({ owner: login, files: { authorized_keys: { text: "placeholder\n", mode: 0o664 } } });
    chownSync(join(t.work, "authorized_keys"), login.uid, t.attacker.gid);
    expect(asAttacker(t, `printf 'ssh-ed25519 ATTACKER\\n' > ${q(join(t.work, "authorized_keys"))}`).status).toBe(0);
    plantSymlink(t, ".sap-co3-0.bak", join(t.outside, "home/.ssh"));
    const run = await attempt(t, [begin, "*** Delete File: shared/authorized_keys", end].join("\n"), {
      operationId: "co3",
      shell: asUser(dash, login.uid, login.gid),
    });
    expectContained(run);
    expect(readFileSync(join(t.outside, "home/.ssh/authorized_keys"), "utf8")).toContain(t.marker);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "authorized_keys")).toBeNull();
  });

  rootTest("as the non-root login user: another user's file in a shared directory, which it may not hard-link (fs.protected_hardlinks), is refused unsafe_directory instead of read by name", async () => {
    const login = loginAccount();
    const t = coTenantTree({ owner: login });
    expect(asAttacker(t, `printf 'ssh-ed25519 ATTACKER\\n' > ${q(join(t.work, "theirs.txt"))}`).status).toBe(0);
    const run = await attempt(t, [begin, "*** Delete File: shared/theirs.txt", end].join("\n"), { shell: asUser(dash, login.uid, login.gid) });
    expectContained(run);
    expect(run.report.errors?.[0]?.code).toBe("unsafe_directory");
    expect(run.report.errors?.[0]?.message).toContain("hard-link");
    expect(read(t, "theirs.txt")).toBe("ssh-ed25519 ATTACKER\n");
  });

  rootTest("a .bak link whose target toggles between link and cp (wrapped link/cp) cannot make root overwrite and chown an outside file", async () => {
    const t = coTenantTree();
    expect(asAttacker(t, `printf 'attacker\\n' > ${q(join(t.work, "f.txt"))}`).status).toBe(0);
    const bak = join(t.work, ".sap-co4-0.bak");
    plantSymlink(t, ".sap-co4-0.bak", join(t.outside, "target.txt"));
    const rules: AttackRule[] = [
      // the link fails (the name exists): now make it dangling, so `[ ! -e bak ]` holds …
      { tool: "link", pattern: "*.sap-*", after: `ln -sfn ${q(join(t.outside, "nothing-here"))} ${q(bak)}` },
      { tool: "ln", pattern: "*.sap-*", after: `ln -sfn ${q(join(t.outside, "nothing-here"))} ${q(bak)}` },
      // … and point it back at the outside file just as cp opens it
      { tool: "cp", pattern: "*.sap-*", before: `ln -sfn ${q(join(t.outside, "target.txt"))} ${q(bak)}` },
    ];
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-attacker", "+edited by root", end].join("\n"), { operationId: "co4", rules });
    expectContained(run);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "f.txt")).toBe("edited by root\n");
  });

  rootTest("BusyBox userland: cp -p through a dangling .bak cannot create a root-owned file outside", async () => {
    const t = coTenantTree({ files: { "f.txt": "v1\n" } });
    plantSymlink(t, ".sap-co5-0.bak", join(t.outside, "created-by-cp"));
    const busybox = shellCases().find((c) => c.name === "busybox");
    if (!busybox) throw new Error("busybox is needed for this test");
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", end].join("\n"), { operationId: "co5", shell: busybox.options });
    expectContained(run);
    expect(existsSync(join(busyboxUserland(), "sh"))).toBe(true);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "f.txt")).toBe("v2\n");
  });

  rootTest("a planted .blob symlink to the attacker's FIFO does not leak the new content of a 0600 file", async () => {
    const t = coTenantTree({ files: { "secret.conf": { text: "password=old\n", mode: 0o600 } } });
    const den = tempDir("sap-attacker-");
    chownSync(den, t.attacker.uid, t.attacker.gid);
    expect(asAttacker(t, `mkfifo ${q(join(den, "fifo"))} && ln -s ${q(join(den, "fifo"))} ${q(join(t.work, ".sap-co6.blob"))}`).status).toBe(0);
    const reader = spawn("setpriv", [`--reuid=${t.attacker.uid}`, `--regid=${t.attacker.gid}`, "--clear-groups", "/bin/sh", "-c", `exec cat ${q(join(den, "fifo"))} > ${q(join(den, "got"))}`], { stdio: "ignore", detached: true });
    try {
      const run = await attempt(t, [begin, "*** Update File: shared/secret.conf", "@@", "-password=old", "+password=NEW-AND-SECRET", end].join("\n"), { operationId: "co6", timeoutMs: 10_000 });
      await Bun.sleep(100);
      const got = existsSync(join(den, "got")) ? readFileSync(join(den, "got"), "utf8") : "";
      expect(got).not.toContain("NEW-AND-SECRET");
      expectContained(run);
      expect(run.report.errors).toBeUndefined();
      expect(read(t, "secret.conf")).toBe("password=NEW-AND-SECRET\n");
    } finally {
      try {
        process.kill(-reader.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }
  });

  rootTest("a planted .journal FIFO nobody reads cannot hang the commit while it holds its locks", async () => {
    const t = coTenantTree({ files: { "f.txt": "v1\n" } });
    expect(asAttacker(t, `mkfifo ${q(join(t.work, ".sap-co7.journal"))}`).status).toBe(0);
    const started = Date.now();
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", end].join("\n"), { operationId: "co7", timeoutMs: 8000 });
    expect(Date.now() - started).toBeLessThan(7000);
    expectContained(run);
    expect(run.report.errors).toBeUndefined();
    expect(read(t, "f.txt")).toBe("v2\n");
  }, 15_000);

  rootTest("a file swapped for a symlink to an outside directory during the Update's rename, and back (wrapped mv): nothing goes outside, and the report does not say ok", async () => {
    const t = coTenantTree({ files: { "f.txt": "v1\n" } });
    const f = join(t.work, "f.txt");
    const rules: AttackRule[] = [{
      tool: "mv",
      pattern: "*f.txt",
      before: `mv ${q(f)} ${q(f + ".orig")} && ln -s ${q(join(t.outside, "dir"))} ${q(f)}`,
      after: `rm -f ${q(f)} && mv ${q(f + ".orig")} ${q(f)}`,
    }];
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", end].join("\n"), { rules });
    expectContained(run);
    // the attacker put its own file back over the new one: ok would be a lie
    expect(read(t, "f.txt")).toBe("v1\n");
    expect(run.report.ok).toBe(false);
  });

  rootTest("the engine's new private directory swapped for a symlink right after it is made (wrapped mkdir/mktemp) writes nothing outside", async () => {
    const t = coTenantTree({ files: { "f.txt": "v1\n" } });
    const swap = (name: string): string => `cd "$W_PWD" && n=${name} && case $n in */*) ;; *) n=./$n ;; esac && mv "$n" "$n.stolen" && ln -s ${q(join(t.outside, "dir"))} "$n"`;
    const rules: AttackRule[] = [
      { tool: "mkdir", pattern: "*.sap-*", after: swap('"$W_LAST"') },
      { tool: "mktemp", pattern: "*.sap-*", after: swap('"$W_OUT"') },
    ];
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", end].join("\n"), { rules });
    expectContained(run);
    expect(run.report.ok).toBe(false);
    expect(read(t, "f.txt")).toBe("v1\n");
    expect(engineLeftovers(t, []).length === 0 || run.report.warnings.some((w) => w.code === "cleanup_incomplete")).toBe(true);
  });

  rootTest("a lock being built, swapped for a symlink right after its mkdir (wrapped mkdir), writes no owner file outside", async () => {
    const t = coTenantTree({ files: { "f.txt": "v1\n" } });
    const rules: AttackRule[] = [{
      tool: "mkdir",
      pattern: "*lock*",
      after: `cd "$W_PWD" && mv "$W_LAST" "$W_LAST.stolen" && ln -s ${q(join(t.outside, "dir"))} "$W_LAST"`,
    }, {
      tool: "mkdir",
      pattern: "./L[0-9]*",
      after: `cd "$W_PWD" && mv "$W_LAST" "$W_LAST.stolen" && ln -s ${q(join(t.outside, "dir"))} "$W_LAST"`,
    }];
    const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", end].join("\n"), { rules });
    expectContained(run);
    if (run.report.ok) expect(read(t, "f.txt")).toBe("v2\n");
    else expect(read(t, "f.txt")).toBe("v1\n");
  });

  rootTest("a file swapped for a symlink to a root-only outside file while the snapshot reads it, and back (wrapped readers): the snapshot never holds outside bytes", async () => {
    const t = coTenantTree({ files: { "f.txt": "harmless\n" } });
    const f = join(t.work, "f.txt");
    const swap = { before: `mv ${q(f)} ${q(f + ".orig")} && ln -s ${q(join(t.outside, "secret.txt"))} ${q(f)}`, after: `rm -f ${q(f)} && mv ${q(f + ".orig")} ${q(f)}` };
    const rules: AttackRule[] = ["cat", "head", "dd", "ln", "link", "tail"].map((tool) => ({ tool, pattern: "*f.txt*", ...swap }));
    const bin = attackBin(t, rules, process.env.PATH!);
    const shell = new LocalShell({ ...dash.options, env: { ...(process.env as Record<string, string>), PATH: `${bin}:${process.env.PATH}` }, cwd: tempDir("sap-cwd-") });
    const snaps = await readSnapshots(shell, t.root, ["shared/f.txt"], { sharedDirectories: "allow" } as Parameters<typeof readSnapshots>[3]);
    const snap = snaps.get("shared/f.txt")!;
    expect(new TextDecoder().decode(snap.bytes ?? new Uint8Array())).not.toContain(t.marker);
    if (snap.bytes) expect(snap.sha256).toBe(sha256Hex("harmless\n"));
    expect(treeDigest(t.outside).size).toBeGreaterThan(0);
  });

  rootTest("a file swapped for a symlink to a root-only outside file just before the snapshot pins it (hook snapshot_pin), its length padded to the secret's size: the pin's refusal is reported, the name is never read (every shell)", async () => {
    // Before the fix a failed pin fell through to the read by name: stat
    // (lstat) measured the symlink, `head -c` followed it, and a target
    // string as long as the secret returned the secret, silently, as root.
    for (const c of shellCases()) {
      const t = coTenantTree({ files: { "f.txt": "inside\n" } });
      const f = join(t.work, "f.txt");
      const size = lstatSync(join(t.outside, "secret.txt")).size;
      const rel = "../../outside/secret.txt"; // from root/shared
      const pad = size - rel.length;
      const target = "./".repeat(Math.floor(pad / 2)) + (pad % 2 ? "..//../outside/secret.txt" : rel);
      const swap = `${attackerPrefix(t).map(q).join(" ")} /bin/sh -c ${q(`mv ${q(f)} ${q(`${f}.held`)} && ln -s ${q(target)} ${q(f)}`)}`;
      const shell = new HookedShell(new LocalShell({ ...c.options, cwd: tempDir("sap-cwd-") }), `case "$1:$2" in snapshot_pin:0) ${swap} ;; esac`);
      const snap = (await readSnapshots(shell, t.root, ["shared/f.txt"], { sharedDirectories: "allow" })).get("shared/f.txt")!;
      expect(lstatSync(f).isSymbolicLink()).toBe(true); // the swap happened
      expect(new TextDecoder().decode(snap.bytes ?? new Uint8Array())).not.toContain(t.marker);
      expect(snap.bytes, c.name).toBeUndefined();
      expect(snap.rejected?.code, c.name).toBe("conflict");
    }
  });
  rootTest("a root whose parent the other user can write, swapped for a symlink to outside between the snapshot and the commit: the Add lands nowhere outside (refused before: the parent is judged like the root)", async () => {
    const t = coTenantTree({ sharing: "parent" });
    const swapRoot = `mv ${q(t.root)} ${q(t.root + ".stolen")} && ln -s ${q(join(t.outside, "dir"))} ${q(t.root)}`;
    const inner = new LocalShell({ ...dash.options, cwd: tempDir("sap-cwd-") });
    let execs = 0;
    const shell: RemoteShell = {
      label: "local",
      exec(command: string, options?: ExecOptions): Promise<ExecResult> {
        if (execs++ === 1) expect(asAttacker(t, swapRoot).status).toBe(0);
        return inner.exec(command, options);
      },
    };
    const before = treeDigest(t.outside);
    const report = await applyPatch(shell, { root: t.root, patch: [begin, "*** Add File: shared/new.txt", "+planted", end].join("\n"), sharedDirectories: "allow" } as Parameters<typeof applyPatch>[1]);
    const changes = digestChanges(before, treeDigest(t.outside));
    if (lstatSync(t.root).isSymbolicLink()) rmSync(t.root, { force: true });
    expect(changes).toEqual([]);
    expect(report.ok).toBe(false);
    // the snapshot already refuses the root: its parent is shared (issue 26.5; trustRootAncestors opts in)
    expect(report.errors?.[0]?.code).toBe("unsafe_directory");
  });
});

describe("co-tenant setups, default sharedDirectories (refuse)", () => {
  for (const sharing of ["group", "sticky", "parent"] as const) {
    rootTest(`a ${sharing === "parent" ? "root whose parent" : `${sharing}-shared directory`} another user can write is refused unsafe_directory before anything is written`, async () => {
      const options: CoTenantOptions = { sharing, files: { "f.txt": "v1\n", "gone.txt": "g\n" } };
      const t = coTenantTree(options);
      const rootBefore = treeDigest(t.root);
      const run = await attempt(t, [begin, "*** Update File: shared/f.txt", "@@", "-v1", "+v2", "*** Delete File: shared/gone.txt", "*** Add File: shared/new/n.txt", "+n", end].join("\n"), { allow: false });
      expect(run.report.ok).toBe(false);
      expect(run.report.errors![0]!.code).toBe("unsafe_directory");
      expect(run.report.errors![0]!.message).toContain(sharing === "parent" ? t.base : t.work);
      expect(run.report.errors![0]!.message).toContain("sharedDirectories");
      expect(digestChanges(rootBefore, treeDigest(t.root))).toEqual([]);
      expectContained(run);
    });
  }
});
