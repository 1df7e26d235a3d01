/**
 * The reconcile ticket: what a failure carries so an operation can be
 * settled from the report alone, and all `reconcile` takes. A good ticket
 * gives the same states after travelling through JSON (real files,
 * LocalShell); a malformed one — it may have
 * come through JSON, a file or a model — fails `invalid_argument` before
 * anything is sent to the host.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { commitRemote } from "../../lib/remote/commit.ts";
import { reconcile } from "../../lib/remote/reconcile.ts";
import { reconcileTicket, reconcileTicketOf } from "../../lib/remote/plan_shas.ts";
import { sha256Hex } from "../../lib/text/sha256.ts";
import type { ReconcileTicket } from "../../lib/types.ts";
import { cleanupTemps, CountingShell, localShell, makeTree, noLeftoversAfterEach, P, plan, shellCases } from "../support/local_trees.ts";

afterAll(cleanupTemps, 30_000);
noLeftoversAfterEach();

const c = shellCases()[0]!;
const A1 = sha256Hex("a1\n");
const A2 = sha256Hex("a2\n");

describe("reconcileTicket", () => {
  test("carries op, paths and both SHA-256s of every file, and the new sizes, but no content", () => {
    const thePlan = plan([
      P.update("a.txt", "a1\n", "a2\n"),
      P.add("n/b.txt", "bee\n"),
      P.delete("c.txt", "c1\n"),
      P.move("m.txt", "d/m.txt", "m1\n", "m22\n"),
    ]);
    expect(reconcileTicket(thePlan, "op_1")).toEqual({
      operationId: "op_1",
      files: [
        { op: "update", path: "a.txt", previousSha256: A1, newSha256: A2, newSize: 3 },
        { op: "add", path: "n/b.txt", previousSha256: null, newSha256: sha256Hex("bee\n"), newSize: 4 },
        { op: "delete", path: "c.txt", previousSha256: sha256Hex("c1\n"), newSha256: null, newSize: null },
        { op: "move", path: "m.txt", moveTo: "d/m.txt", previousSha256: sha256Hex("m1\n"), newSha256: sha256Hex("m22\n"), newSize: 4 },
      ],
    });
  });

  test("reconcileTicketOf finds the ticket among a report's failures, or null", () => {
    const ticket = reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n")]), "op_2");
    expect(reconcileTicketOf({ errors: [{ code: "conflict", message: "", retryable: true }, { code: "outcome_unknown", message: "", retryable: false, reconcile: ticket }] })).toBe(ticket);
    expect(reconcileTicketOf({ errors: [{ code: "conflict", message: "", retryable: true }] })).toBeNull();
    expect(reconcileTicketOf({})).toBeNull();
  });
});

describe("reconcile with a ticket (LocalShell, real files)", () => {
  test("gives the same states after travelling through JSON: applied after a commit, not_applied before one", async () => {
    const root = makeTree({ "a.txt": "a1\n", "b.txt": "b1\n" });
    const shell = localShell(c);
    const committed = plan([P.update("a.txt", "a1\n", "a2\n")]);
    expect((await commitRemote(shell, root, committed, { operationId: "done_1" })).ok).toBe(true);
    const never = plan([P.update("b.txt", "b1\n", "b2\n")]);
    for (const [thePlan, op, state] of [[committed, "done_1", "applied"], [never, "never_1", "not_applied"]] as const) {
      const fromPlan = await reconcile(shell, root, reconcileTicket(thePlan, op));
      const fromTicket = await reconcile(shell, root, JSON.parse(JSON.stringify(reconcileTicket(thePlan, op))));
      expect(fromTicket.files.map((f) => f.state)).toEqual([state]);
      expect({ ...fromTicket, files: fromTicket.files.map((f) => ({ ...f, diff: "" })) })
        .toEqual({ ...fromPlan, files: fromPlan.files.map((f) => ({ ...f, diff: "" })) });
    }
  });

  test("diverged when someone else changed the file", async () => {
    const root = makeTree({ "a.txt": "theirs\n" });
    const ticket = reconcileTicket(plan([P.update("a.txt", "a1\n", "a2\n")]), "div_1");
    const report = await reconcile(localShell(c), root, ticket);
    expect(report.ok).toBe(true);
    expect(report.files[0]).toMatchObject({ path: "a.txt", state: "diverged", bytesWritten: 0, previousSha256: A1, newSha256: A2 });
  });

  const good = (): ReconcileTicket => ({
    operationId: "bad_1",
    files: [
      { op: "update", path: "a.txt", previousSha256: A1, newSha256: A2, newSize: 3 },
      { op: "move", path: "m.txt", moveTo: "d/m.txt", previousSha256: A1, newSha256: A2, newSize: 3 },
    ],
  });
  const bad: { name: string; edit: (t: any) => unknown; says: string }[] = [
    { name: "shell code as the operation id", edit: (t) => (t.operationId = "x;reboot"), says: "operationId must be" },
    { name: "no files array", edit: (t) => (t.files = "a.txt"), says: "files array" },
    { name: "an unknown op", edit: (t) => (t.files[0].op = "chmod"), says: "files[0].op" },
    { name: "a path escaping the root", edit: (t) => (t.files[0].path = "../etc/passwd"), says: "cannot be sent" },
    { name: "an absolute path", edit: (t) => (t.files[0].path = "/etc/passwd"), says: "cannot be sent" },
    { name: "a path with a newline (would break the manifest framing)", edit: (t) => (t.files[0].path = "a\nb"), says: "cannot be sent" },
    { name: "a reserved .sap- name", edit: (t) => (t.files[0].path = ".sap-lock-x"), says: "reserved" },
    { name: "the same path twice", edit: (t) => (t.files[1].moveTo = "a.txt"), says: "twice" },
    { name: "a move without moveTo", edit: (t) => delete t.files[1].moveTo, says: "moveTo" },
    { name: "an update with moveTo", edit: (t) => (t.files[0].moveTo = "x.txt"), says: "moveTo" },
    { name: "an uppercase SHA-256", edit: (t) => (t.files[0].previousSha256 = A1.toUpperCase()), says: "previousSha256" },
    { name: "shell code in a SHA-256", edit: (t) => (t.files[0].newSha256 = "$(touch /tmp/pwned)"), says: "newSha256" },
    { name: "an update without a previous SHA-256", edit: (t) => (t.files[0].previousSha256 = null), says: "previousSha256" },
    { name: "a delete with a new SHA-256", edit: (t) => (t.files[0].op = "delete"), says: "newSha256" },
    { name: "a negative size", edit: (t) => (t.files[0].newSize = -1), says: "newSize" },
  ];
  for (const b of bad) {
    test(`a malformed ticket fails invalid_argument without an exec: ${b.name}`, async () => {
      const root = makeTree({ "a.txt": "a1\n" });
      const shell = new CountingShell(localShell(c));
      const ticket = good();
      b.edit(ticket);
      const report = await reconcile(shell, root, ticket);
      expect(report.ok).toBe(false);
      // An id that is not one is not repeated as the report's.
      const id = /^[A-Za-z0-9_]{1,64}$/.test(ticket.operationId) ? ticket.operationId : "";
      expect(report).toMatchObject({ operationId: id });
      expect(report.errors![0]).toMatchObject({ code: "invalid_argument", operationId: id });
      expect(report.errors![0]!.message).toContain(b.says);
      expect(report.errors![0]!.message).toContain("unchanged");
      expect(shell.count).toBe(0);
    });
  }
});
