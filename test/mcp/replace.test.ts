/**
 * A whole-file replace through the MCP server (issue 29 item 2): the
 * result's per-file op is `replace` in structuredContent (valid against the
 * listed output schema) and in the text a model reads; mode kept.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { applyPatchOutput } from "../../examples/mcp/schemas.ts";
import type { ApplyPatchOutput } from "../../examples/mcp/schemas.ts";
import { call, connect, expectValid, localRoots, makeTree, sha256, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

let dir: string;
let session: Session | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const OLD = "[main]\ndebug = 1\n";
const NEW = "[main]\ndebug = 0\n";

describe("MCP apply_patch: whole-file replace", () => {
  for (const [form, patch] of [
    ["Replace File", "*** Begin Patch\n*** Replace File: app.ini\n+[main]\n+debug = 0\n*** End Patch"],
    ["Delete + Add", "*** Begin Patch\n*** Delete File: app.ini\n*** Add File: app.ini\n+[main]\n+debug = 0\n*** End Patch"],
  ] as const) {
    test(`${form}: op replace in structuredContent and text, expected_sha256 honoured, mode kept`, async () => {
      dir = makeTree({ "app.ini": OLD });
      chmodSync(join(dir, "app.ini"), 0o640);
      session = await connect({ roots: localRoots({ site: dir }) });
      const result = await call(session, "apply_patch", { patch, expected_sha256: { "app.ini": sha256(OLD) } });
      const out = result.structuredContent as ApplyPatchOutput;
      expectValid(applyPatchOutput, out);
      expect(result.isError).toBeFalsy();
      expect(out.files).toHaveLength(1);
      expect(out.files[0]).toMatchObject({ op: "replace", path: "app.ini", previous_sha256: sha256(OLD), new_sha256: sha256(NEW), metadata_preserved: { mode: true, owner: true } });
      expect(textOf(result)).toContain("- replace app.ini");
      expect(readFileSync(join(dir, "app.ini"), "utf8")).toBe(NEW);
      expect(statSync(join(dir, "app.ini")).mode & 0o777).toBe(0o640);
    });
  }

  test("a dry run says replace and changes nothing", async () => {
    dir = makeTree({ "app.ini": OLD });
    session = await connect({ roots: localRoots({ site: dir }) });
    const result = await call(session, "apply_patch", { patch: "*** Begin Patch\n*** Replace File: app.ini\n+x\n*** End Patch", dry_run: true });
    const out = result.structuredContent as ApplyPatchOutput;
    expect(out.files[0]).toMatchObject({ op: "replace", previous_sha256: sha256(OLD), new_sha256: sha256("x\n") });
    expect(readFileSync(join(dir, "app.ini"), "utf8")).toBe(OLD);
  });
});
