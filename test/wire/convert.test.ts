/**
 * The wire converter (examples/wire/convert.ts): library camelCase shapes
 * to the snake_case of the MCP server's structuredContent and the CLI's
 * --json, and back for tickets. It is shape-directed: only the fields its
 * tables name are renamed, so data keyed by paths or user text survives.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyPatch, failure, LocalShell, readHint, reconcileHint, shaHint, warning } from "../../mod.ts";
import type { ApplyReport, CommitReport, PatchFailure, ReconcileTicket } from "../../mod.ts";
import {
  applyReportFromWire,
  convertByShape,
  failureFromWire,
  ticketFromWire,
  wireApplyOutcome,
  wireApplyReport,
  wireFailure,
  wireTicket,
} from "../../examples/wire/convert.ts";
import { snakeCase, WIRE_SHAPES } from "../../examples/wire/shapes.ts";
import { failureSchema } from "../../examples/mcp/schemas.ts";

const A = "a".repeat(64);
const B = "b".repeat(64);
const TICKET: ReconcileTicket = {
  operationId: "op_1",
  files: [
    { op: "move", path: "a_b/c_d.txt", moveTo: "newSha256/x.txt", previousSha256: A, newSha256: B, newSize: 3 },
    { op: "add", path: "n.txt", previousSha256: null, newSha256: B, newSize: 1 },
  ],
};

/** Every key of `value`, at any depth, with its path (for "no camelCase key on the wire"). */
function keysOf(value: unknown, at = "$"): string[] {
  if (value === null || typeof value !== "object") return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => keysOf(v, `${at}[${i}]`));
  return Object.entries(value).flatMap(([k, v]) => [`${at}.${k}`, ...keysOf(v, `${at}.${k}`)]);
}
const camelKeys = (value: unknown): string[] => keysOf(value).filter((k) => /[A-Z]/.test(k.slice(k.lastIndexOf(".") + 1)));

describe("library → wire", () => {
  const cases: { name: string; lib: PatchFailure; wire: Record<string, unknown> }[] = [
    {
      name: "precondition_failed: the SHA fields and a hint kind",
      lib: failure("precondition_failed", "m", { path: "a_b/c_d.txt", expectedSha256: A, actualSha256: B, alreadyAppliedAt: 3, hints: [shaHint("a_b/c_d.txt", B)] }),
      wire: {
        code: "precondition_failed",
        message: "precondition_failed: m",
        retryable: false,
        path: "a_b/c_d.txt",
        expected_sha256: A,
        actual_sha256: B,
        already_applied_at: 3,
        hints: [{ kind: "expected_sha256", path: "a_b/c_d.txt", sha256: B, says: `pass expectedSha256 {"a_b/c_d.txt": "${B}"}` }],
      },
    },
    {
      name: "locked: the lock holder inside",
      lib: failure("locked", "m", {
        operationId: "op_1",
        lock: { kind: "path", name: ".sap-lock-x", ageSeconds: 4, uid: 0, pid: 7, host: "h", operationId: "op_2" },
      }),
      wire: {
        code: "locked",
        message: "locked: m",
        retryable: true,
        operation_id: "op_1",
        lock: { kind: "path", name: ".sap-lock-x", age_seconds: 4, uid: 0, pid: 7, host: "h", operation_id: "op_2" },
      },
    },
    {
      name: "context_mismatch: closest region, candidates with their block, folded chunks, read hint",
      lib: failure("context_mismatch", "m", {
        path: "a.py",
        hunk: 2,
        patchLine: 9,
        closest: { startLine: 2, endLine: 3, score: 0.5, difference: "content", lines: [{ line: 2, id: "2:aa", text: "x" }], diff: "-a\n+b" },
        candidates: [{ line: 5, id: "5:bb", text: "y", enclosing: { line: 1, id: "1:cc", text: "def f():" } }],
        chunks: { count: 2, hunks: [1, 2], patchLines: [4, 9] },
        hints: [readHint("a.py", 2, 3)],
      }),
      wire: {
        code: "context_mismatch",
        message: "context_mismatch: m",
        retryable: false,
        path: "a.py",
        hunk: 2,
        patch_line: 9,
        closest: { start_line: 2, end_line: 3, score: 0.5, difference: "content", lines: [{ line: 2, id: "2:aa", text: "x" }], diff: "-a\n+b" },
        candidates: [{ line: 5, id: "5:bb", text: "y", enclosing: { line: 1, id: "1:cc", text: "def f():" } }],
        chunks: { count: 2, hunks: [1, 2], patch_lines: [4, 9] },
        hints: [{ kind: "read", path: "a.py", start_line: 2, end_line: 3, says: "read lines 2–3 of a.py again" }],
      },
    },
    {
      name: "outcome_unknown: the ticket and the planned SHAs",
      lib: failure("outcome_unknown", "m", { operationId: "op_1", reconcile: TICKET, planned: [{ path: "n.txt", sha256: B }], hints: [reconcileHint("op_1")] }),
      wire: {
        code: "outcome_unknown",
        message: "outcome_unknown: m",
        retryable: false,
        operation_id: "op_1",
        reconcile: {
          operation_id: "op_1",
          files: [
            { op: "move", path: "a_b/c_d.txt", move_to: "newSha256/x.txt", previous_sha256: A, new_sha256: B, new_size: 3 },
            { op: "add", path: "n.txt", previous_sha256: null, new_sha256: B, new_size: 1 },
          ],
        },
        planned: [{ path: "n.txt", sha256: B }],
        hints: [{ kind: "reconcile", operation_id: "op_1", says: "call reconcile with operation id op_1" }],
      },
    },
    {
      name: "no_space, unsafe_directory, host keys, suggested path, unmarked lines",
      lib: failure("no_space", "m", {
        noSpace: { directory: "/srv", bytesNeeded: 10, bytesFree: null },
        unsafeDirectory: { path: "/srv", mode: "2775", uid: 0, gid: 4, reason: "group", writers: "group staff: a,b" },
        fingerprint: "SHA256:x",
        knownHostsLine: "h ssh-ed25519 AAAA",
        suggestedPath: "conf/a.conf",
        unmarkedLines: [4],
        expectedState: "missing",
        actualState: "file",
      }),
      wire: {
        code: "no_space",
        message: "no_space: m",
        retryable: false,
        no_space: { directory: "/srv", bytes_needed: 10, bytes_free: null },
        unsafe_directory: { path: "/srv", mode: "2775", uid: 0, gid: 4, reason: "group", writers: "group staff: a,b" },
        fingerprint: "SHA256:x",
        known_hosts_line: "h ssh-ed25519 AAAA",
        suggested_path: "conf/a.conf",
        unmarked_lines: [4],
        expected_state: "missing",
        actual_state: "file",
      },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const wire = wireFailure(c.lib);
      expect(wire).toEqual(c.wire as never);
      expect(camelKeys(wire)).toEqual([]);
      // The MCP output schema accepts it, and back from the wire it is the library's value again.
      expect(failureSchema.safeParse(wire).success).toBe(true);
      expect(failureFromWire(wire)).toEqual(c.lib);
    });
  }

  test("data keyed by paths or user text is never renamed: only the fields a table names are", () => {
    const data = { "a_b/c_d.txt": A, newSha256: B, "Operation Id": "x" };
    // A value whose rule is `true` travels as it is.
    expect(convertByShape({ newSha256: data, expectedSha256: data }, { newSha256: true, expectedSha256: true }, true)).toEqual({
      new_sha256: data,
      expected_sha256: data,
    });
    // A field the table does not know keeps its name and its value, untouched.
    const f = { ...failure("invalid_argument", "m"), byPath: data } as PatchFailure;
    expect(wireFailure(f)).toMatchObject({ byPath: data });
    // Back from the wire likewise.
    expect(convertByShape({ operation_id: "op", files: [], extra: data }, WIRE_SHAPES.ticket, false)).toEqual({ operationId: "op", files: [], extra: data });
  });

  test("values are never rewritten, except a hint's kind", () => {
    const f = failure("not_found", "no newSha256 or a_b here", { path: "newSha256_x/a_b.txt", hints: [shaHint("operation_id", null)], closestPaths: [] });
    const wire = wireFailure(f);
    expect(wire.path).toBe("newSha256_x/a_b.txt");
    expect(wire.message).toBe("not_found: no newSha256 or a_b here");
    expect(wire.hints).toEqual([{ kind: "expected_sha256", path: "operation_id", sha256: null, says: f.hints![0]!.says }]);
  });

  test("every table's wire names are snake_case and distinct", () => {
    for (const [name, shape] of Object.entries(WIRE_SHAPES)) {
      const wire = Object.keys(shape).map(snakeCase);
      expect({ name, camel: wire.filter((k) => /[A-Z]/.test(k)), unique: new Set(wire).size }).toEqual({ name, camel: [], unique: wire.length });
    }
  });
});

describe("tickets and reports back from the wire", () => {
  test("a ticket in either spelling becomes the library's ticket", () => {
    expect(ticketFromWire(wireTicket(TICKET))).toEqual(TICKET);
    expect(ticketFromWire(JSON.parse(JSON.stringify(TICKET)))).toEqual(TICKET);
  });

  test("an apply outcome with its reconcile round-trips, and no camelCase key reaches the wire", () => {
    const report: ApplyReport = {
      ok: false,
      operationId: "op_1",
      atomicity: "batch_preflight_per_file_commit",
      elevated: false,
      dryRun: false,
      files: [{
        op: "move",
        path: "a_b/c_d.txt",
        moveTo: "x.txt",
        previousSha256: A,
        newSha256: B,
        bytesWritten: 3,
        metadataPreserved: { mode: true, owner: false },
        bytesUploaded: 3,
        snapshot: "downloaded",
        diff: "",
        warnings: [warning("mode_not_preserved", "w", { path: "x.txt", patchLine: 2 })],
        directoryTrust: "trusted",
      }],
      warnings: [],
      errors: [failure("outcome_unknown", "m", { operationId: "op_1", reconcile: TICKET })],
    };
    const reconciled: CommitReport = {
      ok: true,
      operationId: "op_1",
      atomicity: "batch_preflight_per_file_commit",
      elevated: false,
      files: [{ ...report.files[0]!, state: "applied" }],
      warnings: [],
    };
    const wire = wireApplyOutcome({ ...report, reconciled });
    expect(camelKeys(wire)).toEqual([]);
    expect(wire).toMatchObject({ operation_id: "op_1", dry_run: false, files: [{ move_to: "x.txt", bytes_uploaded: 3, directory_trust: "trusted", metadata_preserved: { mode: true, owner: false } }] });
    expect(wire.reconciled).toMatchObject({ ok: true, files: [{ state: "applied", new_sha256: B }] });
    expect(applyReportFromWire(wireApplyReport(report))).toEqual(report);
  });
});

describe("real reports", () => {
  test("an applyPatch report on the wire has only snake_case keys, and the same values", async () => {
    const root = mkdtempSync(join(tmpdir(), "sap-wire-"));
    try {
      writeFileSync(join(root, "a_b.txt"), "one\ntwo\n");
      const report = await applyPatch(new LocalShell(), {
        root,
        patch: "*** Begin Patch\n*** Update File: a_b.txt\n@@\n-two\n+TWO\n*** Add File: new_file.txt\n+x\n*** End Patch",
      });
      expect(report.ok).toBe(true);
      const wire = wireApplyReport(report);
      expect(camelKeys(wire)).toEqual([]);
      expect(wire.files.map((f) => [f.path, f.new_sha256, f.bytes_written])).toEqual(report.files.map((f) => [f.path, f.newSha256, f.bytesWritten]));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
