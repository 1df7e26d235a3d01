/**
 * The example server's small pieces, table-driven: the oversize scanner,
 * log escaping, result bounds, client roots (the command line: server_args.test.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { boundFileDiffs, cutText, guardResult } from "../../examples/mcp/bounds.ts";
import { rootsFromClient, sensitiveRootProblem } from "../../examples/mcp/client_roots.ts";
import { escapeForLog, lineWriter } from "../../examples/mcp/log.ts";
import { TopLevelScanner } from "../../examples/mcp/oversize.ts";
import { readOnlyBind, unmountAll } from "../support/fault_mounts.ts";
import { rootTest } from "../support/local_trees.ts";

const work = mkdtempSync(join(tmpdir(), "sap-mcp-pieces-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("TopLevelScanner: id and method of a message it does not keep", () => {
  const big = "x".repeat(100_000);
  const cases: { name: string; json: string; id: unknown; method: unknown }[] = [
    { name: "SDK order: id last, after huge params", json: `{"method":"tools/call","params":{"name":"apply_patch","arguments":{"patch":"${big}"}},"jsonrpc":"2.0","id":42}`, id: 42, method: "tools/call" },
    { name: "id first, string id", json: `{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{"a":"${big}"}}`, id: "req-7", method: "tools/call" },
    { name: "nested id and method keys are not the top-level ones", json: `{"params":{"id":1,"method":"evil","x":["id",{"id":2}]},"method":"m","id":3}`, id: 3, method: "m" },
    { name: "escaped quotes and braces inside strings", json: `{"params":{"patch":"a\\"}{\\\\\\",\\"id\\":9"},"id":5,"method":"tools/call"}`, id: 5, method: "tools/call" },
    { name: "whitespace everywhere, negative id", json: `{ "id" : -12 , "method" : "ping" }`, id: -12, method: "ping" },
    { name: "a notification: no id", json: `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"${big}"}}`, id: undefined, method: "notifications/x" },
    { name: "id null", json: `{"id":null,"method":"a"}`, id: null, method: "a" },
    { name: "not JSON at all", json: `${big}`, id: undefined, method: undefined },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const scanner = new TopLevelScanner();
      const bytes = new TextEncoder().encode(c.json);
      // Fed in odd-sized chunks, as a pipe delivers them.
      for (let i = 0; i < bytes.length; i += 4093) scanner.push(bytes.subarray(i, i + 4093));
      expect([scanner.id, scanner.method] as unknown[]).toEqual([c.id, c.method]);
    });
  }
});

describe("escapeForLog: nothing can break or forge a log line", () => {
  const cases: [string, string][] = [
    ["plain path/ü 🚀.txt", "plain path/ü 🚀.txt"],
    ["a\nb", "a\\x0ab"],
    ["x\u001b[31mred\u001b[0m", "x\\x1b[31mred\\x1b[0m"],
    ["cr\rtab\tdel\u007f", "cr\\x0dtab\\x09del\\x7f"],
    ["c1\u009b2J", "c1\\x9b2J"],
    ["bidi\u202eevil\u2066", "bidi\\u{202e}evil\\u{2066}"],
    ["sep\u2028x", "sep\\u{2028}x"],
    ["back\\x0aslash", "back\\\\x0aslash"],
  ];
  for (const [input, output] of cases) test(JSON.stringify(input), () => expect(escapeForLog(input)).toBe(output));

  test("a forged line stays one line with the prefix", () => {
    const out: string[] = [];
    lineWriter((s) => out.push(s))("read_file site:a\n[ssh-apply-patch] apply_patch site applied: delete a.txt\u001b[2K");
    expect(out).toEqual(["[ssh-apply-patch] read_file site:a\\x0a[ssh-apply-patch] apply_patch site applied: delete a.txt\\x1b[2K\n"]);
  });
});

describe("result bounds", () => {
  const cases: { name: string; text: string; budget: number; expected: string; cut: boolean }[] = [
    { name: "fits", text: "a\nb\n", budget: 4, expected: "a\nb\n", cut: false },
    { name: "cut after the last whole line", text: "a\nbb\nccc\n", budget: 6, expected: "a\nbb\n", cut: true },
    { name: "one long line: cut inside it", text: "x".repeat(100), budget: 10, expected: "x".repeat(10), cut: true },
    { name: "never inside a UTF-8 character or a surrogate pair", text: "ab🚀🚀", budget: 7, expected: "ab🚀", cut: true },
    { name: "never inside a 2-byte character", text: "éééé", budget: 5, expected: "éé", cut: true },
  ];
  for (const c of cases) {
    test(`cutText: ${c.name}`, () => {
      const r = cutText(c.text, c.budget);
      expect({ text: r.text, cut: r.cut }).toEqual({ text: c.expected, cut: c.cut });
      expect(r.bytes).toBe(new TextEncoder().encode(r.text).length);
      expect(r.total).toBe(new TextEncoder().encode(c.text).length);
    });
  }

  test("boundFileDiffs shares the budget across files in order and marks the cut ones", () => {
    const files = [{ path: "a", diff: "1\n".repeat(10) }, { path: "b", diff: "2\n".repeat(10) }, { path: "c", diff: "" }, { path: "d", diff: "3\n" }];
    const out = boundFileDiffs(files, 30);
    expect(out[0]).toEqual(files[0]!);
    expect(out[1]).toEqual({ path: "b", diff: "2\n".repeat(5), diff_truncated: true, diff_bytes: 20 });
    expect(out[2]).toEqual(files[2]!);
    expect(out[3]).toEqual({ path: "d", diff: "", diff_truncated: true, diff_bytes: 2 });
  });

  test("guardResult cuts text blocks to the budget with a note; small results pass unchanged", () => {
    const small = { content: [{ type: "text" as const, text: "ok" }] };
    expect(guardResult(small, 100)).toBe(small);
    const r = guardResult({ content: [{ type: "text", text: "a\n".repeat(40) }, { type: "text", text: "b\n".repeat(40) }] }, 100);
    const texts = r.content.map((b) => (b.type === "text" ? b.text : ""));
    expect(texts[0]).toBe("a\n".repeat(40));
    expect(texts[1]).toStartWith("b\n".repeat(10));
    expect(texts[1]).toContain("[cut: 20 of 80 bytes of this block shown");
  });
});

describe("rootsFromClient", () => {
  test("file:// directories become local roots with unique names; everything else is ignored with a reason", () => {
    const a = join(work, "project");
    const b = join(work, "other", "project");
    mkdirSync(a, { recursive: true });
    mkdirSync(b, { recursive: true });
    writeFileSync(join(work, "file.txt"), "");
    const result = rootsFromClient([
      { uri: pathToFileURL(a).href, name: "My Project" },
      { uri: pathToFileURL(b).href },
      { uri: pathToFileURL(a).href, name: "named" },
      { uri: "https://example.com/x" },
      { uri: pathToFileURL(join(work, "file.txt")).href },
      { uri: pathToFileURL(join(work, "missing")).href },
    ]);
    expect(result.roots.map((r) => [r.name, r.path, r.kind])).toEqual([
      ["project", a, "local"],
      ["project-2", b, "local"],
      ["named", a, "local"],
    ]);
    expect(result.ignored).toHaveLength(3);
    expect(result.ignored.join("\n")).toContain("not a file:// URI");
    expect(result.ignored.join("\n")).toContain("not an existing local directory");
  });

  test("a client root that would hand over the machine is refused, also through a symlink; a project folder is not", () => {
    const link = join(work, "to-root");
    symlinkSync("/", link);
    const result = rootsFromClient(["/", "/root", "/etc", "/etc/ssh", "/usr", "/var", "/home", link, "/usr/local", "/var/tmp", work].map((d) => ({ uri: pathToFileURL(d).href })));
    expect(result.roots.map((r) => r.path)).toEqual(["/usr/local", "/var/tmp", work]);
    expect(result.ignored).toHaveLength(8);
    expect(result.ignored[0]).toContain("refused: / holds the whole machine");
    expect(result.ignored.every((line) => line.includes("configure it with --root"))).toBe(true);
  });
});

describe("rootsFromClient compares by identity too (bind mounts)", () => {
  afterAll(unmountAll);
  // realpath cannot see through a bind mount: before, a bind of /etc was accepted as a client root.
  rootTest("a bind mount of /etc (and a directory inside it) or of /usr is refused as that directory", () => {
    const etc = readOnlyBind("/etc");
    const usr = readOnlyBind("/usr");
    const project = join(work, "bound-project");
    mkdirSync(project);
    const result = rootsFromClient([etc, join(etc, "ssh"), usr, join(usr, "local"), project].map((d) => ({ uri: pathToFileURL(d).href })));
    expect(result.roots.map((r) => r.path)).toEqual([join(usr, "local"), project]);
    expect(result.ignored).toEqual([
      expect.stringContaining(`refused: ${etc} is the directory /etc (the same device and inode: a bind mount)`),
      expect.stringContaining(`refused: ${join(etc, "ssh")} is inside ${etc}, the directory /etc`),
      expect.stringContaining(`refused: ${usr} is the directory /usr (the same device and inode: a bind mount)`),
    ]);
  });
});

describe("sensitiveRootProblem", () => {
  const cases: { path: string; says: string | null }[] = [
    { path: "/", says: "/ holds the whole machine" },
    { path: "/root", says: "is root's home /root" },
    { path: "/root/project", says: "is inside root's home /root" },
    { path: "/srv/root-home", says: "is root's home /srv/root-home" }, // uid 0's home from passwd (given here)
    { path: "/etc", says: "is /etc" },
    { path: "/etc/cron.d", says: "is inside /etc" },
    { path: "/proc/self", says: "is inside /proc" },
    { path: "/usr", says: "is the whole of /usr" },
    { path: "/var", says: "is the whole of /var" },
    { path: "/home", says: "is the whole of /home" },
    { path: "/home/me/project", says: null },
    { path: "/var/www/site", says: null },
    { path: "/usr/local/src/app", says: null },
    { path: "/srv", says: "holds root's home /srv/root-home" },
    { path: "/tmp/work", says: null },
  ];
  for (const c of cases) {
    test(`${c.path} → ${c.says ?? "allowed"}`, () => {
      const problem = sensitiveRootProblem(c.path, ["/root", "/srv/root-home"]);
      if (c.says === null) expect(problem).toBe(null);
      else expect(problem).toContain(c.says);
    });
  }
});
