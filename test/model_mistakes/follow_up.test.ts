/**
 * Each model mistake of follow_up_cases.ts recovers in one follow-up call
 * (issue 29 item 7, "done when"): over stdio and over Streamable HTTP, on
 * local roots and on roots on a real sshd — one example server per
 * combination for the whole table (follow_up_harness.ts). How to add a
 * row: the header of follow_up_cases.ts.
 */
import { afterAll, beforeAll, describe, test } from "bun:test";
import { sshdReady, startSshd } from "../support/sshd.ts";
import type { Sshd } from "../support/sshd.ts";
import { FOLLOW_UPS } from "./follow_up_cases.ts";
import { checkRun, removeWork, runCase, startEndpoint, workDir } from "./follow_up_harness.ts";
import type { Endpoint } from "./follow_up_harness.ts";

const sshOk = sshdReady("model mistakes, one follow-up, SSH roots (test/model_mistakes/follow_up.test.ts)");

let work: string;
let sshd: Sshd | undefined;
beforeAll(async () => {
  work = workDir();
  if (sshOk) sshd = await startSshd();
}, 30_000);
afterAll(async () => {
  await sshd?.stop();
  if (work) removeWork(work);
}, 30_000);

for (const transport of ["stdio", "http"] as const) {
  for (const kind of ["local", "ssh"] as const) {
    describe.skipIf(kind === "ssh" && !sshOk)(`one follow-up: ${transport} × ${kind} roots`, () => {
      let endpoint: Endpoint;
      beforeAll(async () => {
        endpoint = await startEndpoint(transport, kind, FOLLOW_UPS, work, sshd);
      }, 30_000);
      afterAll(async () => {
        await endpoint?.close();
      }, 30_000);
      for (const c of FOLLOW_UPS) {
        test(`${c.id}: ${c.why}`, async () => {
          checkRun(endpoint, c, await runCase(endpoint, c, sshd));
        }, 30_000);
      }
    });
  }
}
