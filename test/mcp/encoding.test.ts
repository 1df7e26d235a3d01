/**
 * Opt-in single-byte encodings through the MCP server (issue 29 item 6):
 * read_file and apply_patch take `encoding`, the round trip is byte-exact
 * with the SHA-256s over the bytes, and the failures say the argument in
 * this server's words.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { applyPatchOutput, readFileOutput } from "../../examples/mcp/schemas.ts";
import type { ApplyPatchOutput, ReadFileOutput } from "../../examples/mcp/schemas.ts";
import { call, connect, expectValid, localRoots, makeTree, sha256, textOf } from "./helpers.ts";
import type { Session } from "./helpers.ts";

let dir: string;
let session: Session | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
// "[kunde]\r\nname = Müller\r\nstadt = Köln\r\n" in latin-1.
const LATIN = bytes("[kunde]\r\nname = M", [0xfc], "ller\r\nstadt = K", [0xf6], "ln\r\n");

async function start(): Promise<Session> {
  dir = makeTree({ "kunde.ini": LATIN });
  session = await connect({ roots: localRoots({ site: dir }) });
  return session;
}

describe("MCP: encoding", () => {
  test("read_file with encoding latin1, then apply_patch with the same encoding and the file_sha256: byte-exact, the new sha chains", async () => {
    await start();
    const read = await call(session!, "read_file", { path: "kunde.ini", encoding: "latin1", line_ids: true });
    const window = read.structuredContent as ReadFileOutput;
    expectValid(readFileOutput, window);
    expect(read.isError).toBeFalsy();
    expect(window.file_sha256).toBe(sha256(LATIN));
    expect(window.eol).toBe("crlf");
    expect(window.text).toContain("|stadt = Köln\n");
    // The model copies the line it read (with its id) into the chunk.
    const line3 = window.text!.split("\n")[2]!;
    const applied = await call(session!, "apply_patch", {
      patch: `*** Begin Patch\n*** Update File: kunde.ini\n@@\n-${line3}\n+stadt = Düsseldorf\n*** End Patch`,
      encoding: "latin1",
      expected_sha256: { "kunde.ini": window.file_sha256 },
    });
    const out = applied.structuredContent as ApplyPatchOutput;
    expectValid(applyPatchOutput, out);
    expect(applied.isError).toBeFalsy();
    const want = bytes("[kunde]\r\nname = M", [0xfc], "ller\r\nstadt = D", [0xfc], "sseldorf\r\n");
    expect([...new Uint8Array(readFileSync(join(dir, "kunde.ini")))]).toEqual([...want]);
    expect(out.files[0]).toMatchObject({ op: "update", previous_sha256: sha256(LATIN), new_sha256: sha256(want) });
    const again = (await call(session!, "read_file", { path: "kunde.ini", encoding: "latin1" })).structuredContent as ReadFileOutput;
    expect(again.file_sha256).toBe(out.files[0]!.new_sha256!);
    expect(again.text).toBe("[kunde]\nname = Müller\nstadt = Düsseldorf\n");
  });

  test("without encoding: read_file and apply_patch fail invalid_utf8 naming the encoding argument, not a library option", async () => {
    await start();
    for (const [tool, args] of [
      ["read_file", { path: "kunde.ini" }],
      ["apply_patch", { patch: "*** Begin Patch\n*** Update File: kunde.ini\n@@\n-[kunde]\n+[client]\n*** End Patch" }],
    ] as const) {
      const result = await call(session!, tool, args);
      expect(result.isError).toBe(true);
      const errors = (result.structuredContent as { errors: { code: string; message: string }[] }).errors;
      expect(errors[0]!.code).toBe("invalid_utf8");
      expect(textOf(result)).toContain('send the request again with the argument "encoding": "latin1" (or "windows-1252")');
      expect(textOf(result)).not.toContain("encoding: \"latin1\"");
    }
  });

  test("a + line latin1 cannot write: unencodable_character on the wire (code_point, column), nothing applied, windows-1252 named as the argument", async () => {
    await start();
    const result = await call(session!, "apply_patch", {
      patch: "*** Begin Patch\n*** Update File: kunde.ini\n@@\n-stadt = Köln\n+stadt = Köln €\n*** End Patch",
      encoding: "latin1",
    });
    expect(result.isError).toBe(true);
    const out = result.structuredContent as ApplyPatchOutput;
    expectValid(applyPatchOutput, out);
    expect(out.errors![0]).toMatchObject({ code: "unencodable_character", path: "kunde.ini", patch_line: 5, unencodable: { character: "€", code_point: 0x20ac, encoding: "latin1", column: 14 } });
    expect(textOf(result)).toContain('send the argument "encoding": "windows-1252" instead');
    expect([...new Uint8Array(readFileSync(join(dir, "kunde.ini")))]).toEqual([...LATIN]);
  });

  test("an encoding the server does not know is refused by the schema, nothing read", async () => {
    await start();
    const result = await call(session!, "read_file", { path: "kunde.ini", encoding: "iso-8859-15" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("encoding");
  });
});

describe("MCP apply_patch_fleet: encoding", () => {
  test("the same latin-1 edit on every host of a group, byte-exactly; without encoding every host refuses invalid_utf8", async () => {
    const { loadGroups } = await import("../../examples/mcp/groups.ts");
    const dirs: Record<string, string> = {};
    for (const name of ["h1", "h2"]) dirs[name] = makeTree({ "kunde.ini": LATIN }, `sap-mcp-enc-${name}-`);
    dir = dirs.h1!;
    const roots = localRoots(dirs);
    session = await connect({ roots, groups: loadGroups(["hosts=h1,h2"], roots) });
    const patch = "*** Begin Patch\n*** Update File: kunde.ini\n@@\n-stadt = Köln\n+stadt = Bonn\n*** End Patch";
    const refused = await call(session, "apply_patch_fleet", { group: "hosts", patch, canary: 0, max_failures: 5 });
    expect(refused.isError).toBe(true);
    const hosts = (refused.structuredContent as { hosts: { state: string; error?: { code: string } }[] }).hosts;
    expect(hosts.map((h) => h.error?.code)).toEqual(["invalid_utf8", "invalid_utf8"]);
    const applied = await call(session, "apply_patch_fleet", { group: "hosts", patch, encoding: "latin1" });
    expect(applied.isError).toBeFalsy();
    const want = bytes("[kunde]\r\nname = M", [0xfc], "ller\r\nstadt = Bonn\r\n");
    for (const d of Object.values(dirs)) expect([...new Uint8Array(readFileSync(join(d, "kunde.ini")))]).toEqual([...want]);
    rmSync(dirs.h2!, { recursive: true, force: true });
  });
});
