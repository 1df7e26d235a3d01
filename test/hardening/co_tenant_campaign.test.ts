/**
 * Campaign 7 in short (the long run is `npm run hardening`): the generic
 * co-tenant attacker (co_tenant_attacker.mjs, a real second uid) against
 * commits as root, through LocalShell and over SSH with sudo, and as the
 * non-root login user, in a group-shared and a sticky directory. `sharedDirectories: "allow"`: zero
 * escapes, every report true, no unreported leftovers. Default policy: every
 * attempt refused `unsafe_directory`, nothing written.
 */
import { afterAll, describe, expect } from "bun:test";
import { LocalShell } from "../../lib/remote/local_shell.ts";
import { asUser, cleanupTemps, rootTest, shellCases, tempDir } from "../support/local_trees.ts";
import { loginAccount } from "./co_tenant_fixture.ts";
import { only, shellsUnderTest } from "../support/shells_under_test.ts";
import { describeCoTenant, runCoTenantCampaign } from "./co_tenant_campaign.ts";
import type { CoTenantOptions } from "./co_tenant_campaign.ts";

afterAll(cleanupTemps, 30_000);
const shells = shellsUnderTest({ suite: "hardening: co-tenant campaign" });

const RUNS: { name: string; sharing: CoTenantOptions["sharing"]; mode: CoTenantOptions["mode"]; commits: number; seed: number }[] = [
  { name: "group-shared directory, allow", sharing: "group", mode: "allow", commits: 40, seed: 71 },
  { name: "sticky directory, allow", sharing: "sticky", mode: "allow", commits: 15, seed: 72 },
  { name: "group-shared directory, default policy", sharing: "group", mode: "refuse", commits: 8, seed: 73 },
  { name: "sticky directory, default policy", sharing: "sticky", mode: "refuse", commits: 4, seed: 74 },
];

describe("co-tenant attacker campaign (LocalShell as root)", () => {
  for (const r of RUNS) {
    rootTest(r.name, async () => {
      const f = await runCoTenantCampaign({ shell: new LocalShell({ shell: ["dash"], cwd: tempDir("sap-cwd-") }), commits: r.commits, seed: r.seed, sharing: r.sharing, mode: r.mode });
      if (f.violations.length > 0) console.error(describeCoTenant(f), f.violations.slice(0, 10));
      expect(f.violations).toEqual([]);
      expect(f.escapes).toBe(0);
      expect(f.lies).toBe(0);
      expect(f.commits).toBe(r.commits);
      if (r.mode === "refuse") expect(f.results).toEqual({ unsafe_directory: r.commits });
    }, 120_000);
  }
});

describe("co-tenant attacker campaign (LocalShell as the non-root login user)", () => {
  rootTest("group-shared directory of the login user's root, allow", async () => {
    const login = loginAccount();
    const dash = shellCases().find((x) => x.name === "dash")!;
    const shell = new LocalShell({ ...asUser(dash, login.uid, login.gid), cwd: tempDir("sap-cwd-") });
    const f = await runCoTenantCampaign({ shell, commits: 20, seed: 75, sharing: "group", mode: "allow", engine: login });
    if (f.violations.length > 0) console.error(describeCoTenant(f), f.violations.slice(0, 10));
    expect(f.violations).toEqual([]);
    expect(f.escapes).toBe(0);
    expect(f.lies).toBe(0);
  }, 120_000);
});

for (const c of only(shells, ["ssh-sudo"])) {
  describe(`co-tenant attacker campaign (${c.name})`, () => {
    for (const r of RUNS.filter((x) => x.sharing === "group")) {
      rootTest(r.name, async () => {
        const f = await runCoTenantCampaign({ shell: await c.open(), commits: Math.ceil(r.commits / 2), seed: r.seed + 100, sharing: r.sharing, mode: r.mode });
        if (f.violations.length > 0) console.error(describeCoTenant(f), f.violations.slice(0, 10));
        expect(f.violations).toEqual([]);
        expect(f.escapes).toBe(0);
        expect(f.lies).toBe(0);
      }, 120_000);
    }
  });
}
