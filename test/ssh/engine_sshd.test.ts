import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitRemote } from "../../lib/remote/commit.ts";
import { parsePatch } from "../../lib/patch/parse.ts";
import { planPatch } from "../../lib/plan/plan.ts";
import { readSnapshots } from "../../lib/remote/snapshot.ts";
import type { RemoteShell } from "../../lib/remote/shell.ts";
import { connectSsh } from "../../lib/ssh/shell.ts";
import type { CommitReport, PatchFailure } from "../../lib/types.ts";
import { ensureTestUsers, sshdReady, startSshd, writeKnownHosts } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { sshOptions } from "./helpers.ts";

const ready = sshdReady("remote engine over SSH with sudo (test/ssh/engine_sshd.test.ts)", true);

const PATCH = [
  "*** Begin Patch",
  "*** Update File: app.conf",
  "@@",
  " listen 80",
  "-workers 2",
  "+workers 8",
  "*** End Patch",
].join("\n");

/** parse → readSnapshots → planPatch → commitRemote; the failing stage's errors, or the commit report. */
async function apply(shell: RemoteShell, root: string): Promise<{ stage: "plan" | "commit"; errors: PatchFailure[]; report?: CommitReport }> {
  const parsed = parsePatch(PATCH);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
  const snapshots = await readSnapshots(shell, root, ["app.conf"]);
  const planned = planPatch(parsed.patch, snapshots);
  if (!planned.ok) return { stage: "plan", errors: planned.errors };
  const report = await commitRemote(shell, root, planned.plan);
  return { stage: "commit", errors: report.errors ?? [], report };
}

describe.skipIf(!ready)("the remote engine over a real sshd with sudo", () => {
  let sshd: Sshd;
  let work: string;
  let root: string;
  let knownHosts: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "sap-engine-"));
    sshd = await startSshd();
    ensureTestUsers();
    knownHosts = writeKnownHosts(work, [sshd.hostKeyLine]);
    root = mkdtempSync(join(tmpdir(), "sap-root-"));
    chmodSync(root, 0o755);
  }, 30_000);
  afterAll(async () => {
    await sshd?.stop();
    rmSync(work, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  function rootOwnedFile(): string {
    const file = join(root, "app.conf");
    writeFileSync(file, "listen 80\nworkers 2\n");
    chownSync(file, 0, 1); // root:daemon — a group we must keep, not the caller's
    chmodSync(file, 0o640);
    return file;
  }

  test("sudo -n (NOPASSWD) edits a root-owned 0640 file, keeping owner, group and mode; the report says elevated", async () => {
    const file = rootOwnedFile();
    const shell = await connectSsh(sshOptions(sshd, knownHosts, { sudo: true }));
    try {
      const { stage, errors, report } = await apply(shell, root);
      expect(errors).toEqual([]);
      expect(stage).toBe("commit");
      expect(report!.ok).toBe(true);
      expect(report!.elevated).toBe(true);
      expect(report!.files[0]!.metadataPreserved).toEqual({ mode: true, owner: true });
    } finally {
      await shell.close();
    }
    expect(readFileSync(file, "utf8")).toBe("listen 80\nworkers 8\n");
    const stat = statSync(file);
    expect([stat.uid, stat.gid, stat.mode & 0o7777]).toEqual([0, 1, 0o640]);
  }, 15000);

  test("the same user without sudo cannot read it: a typed refusal, the file untouched", async () => {
    const file = rootOwnedFile();
    const shell = await connectSsh(sshOptions(sshd, knownHosts));
    try {
      expect(shell.elevated).toBe(false);
      const { stage, errors } = await apply(shell, root);
      expect(stage).toBe("plan"); // refused at snapshot time, before any write was attempted
      expect(errors.map((e) => e.code)).toEqual(["permission_denied"]);
      expect(errors[0]!.path).toBe("app.conf");
    } finally {
      await shell.close();
    }
    expect(readFileSync(file, "utf8")).toBe("listen 80\nworkers 2\n");
  }, 15000);
});
