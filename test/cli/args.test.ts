/**
 * The CLI's flag parser (examples/cli/args.ts), in-process: every usage
 * rule, and what valid flags turn into.
 */
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { parseApplyArgs } from "../../examples/cli/args.ts";

const SHA = "ab".repeat(32);

describe("parseApplyArgs usage errors", () => {
  const cases: { name: string; argv: string[]; message: string }[] = [
    { name: "no --root", argv: [], message: "--root DIR is required" },
    { name: "an empty --root", argv: ["--root", ""], message: "--root DIR is required" },
    { name: "an unknown flag", argv: ["--root", "/r", "--bogus"], message: "--bogus" },
    { name: "a flag missing its value", argv: ["--root"], message: "--root" },
    { name: "a positional argument", argv: ["--root", "/r", "patch.txt"], message: "unexpected argument \"patch.txt\"" },
    { name: "a bad --matching", argv: ["--root", "/r", "--matching", "fuzzy"], message: "--matching must be one of exact, whitespace, lenient" },
    { name: "--expect without =", argv: ["--root", "/r", "--expect", SHA], message: "expected PATH=SHA256" },
    { name: "--expect with an empty path", argv: ["--root", "/r", "--expect", `=${SHA}`], message: "expected PATH=SHA256" },
    { name: "--expect with a short SHA", argv: ["--root", "/r", "--expect", "a.txt=abc"], message: "expected PATH=SHA256" },
    { name: "--timeout-ms not a number", argv: ["--root", "/r", "--timeout-ms", "soon"], message: "--timeout-ms" },
    { name: "--timeout-ms zero", argv: ["--root", "/r", "--timeout-ms", "0"], message: "--timeout-ms" },
    { name: "--sudo without --ssh", argv: ["--root", "/r", "--sudo"], message: "--sudo needs --ssh" },
    { name: "--identity without --ssh", argv: ["--root", "/r", "--identity", "/etc/hostname"], message: "--identity needs --ssh" },
    { name: "--known-hosts without --ssh", argv: ["--root", "/r", "--known-hosts", "/k"], message: "--known-hosts needs --ssh" },
    { name: "--accept-new-host-key without --ssh", argv: ["--root", "/r", "--accept-new-host-key"], message: "--accept-new-host-key needs --ssh" },
    { name: "a bad --ssh destination", argv: ["--root", "/r", "--ssh", "user@"], message: "is not [user@]host[:port]" },
    { name: "an --ssh port out of range", argv: ["--root", "/r", "--ssh", "web1:70000"], message: "is not [user@]host[:port]" },
    { name: "a relative --root with --ssh", argv: ["--root", "srv", "--ssh", "web1"], message: "absolute path on the remote host" },
    { name: "a missing --identity file", argv: ["--root", "/r", "--ssh", "web1", "--identity", "/nonexistent/key"], message: "no such file" },
    { name: "a missing --patch file", argv: ["--root", "/r", "--patch", "/nonexistent/p.patch"], message: "no such file" },
    { name: "an unset --sudo-password-env", argv: ["--root", "/r", "--ssh", "web1", "--sudo-password-env", "SAP_SURELY_UNSET_VAR"], message: "not set" },
    { name: "a missing --reconcile file", argv: ["--root", "/r", "--reconcile", "/nonexistent/ticket.json"], message: "no such file" },
    { name: "--reconcile with --patch", argv: ["--root", "/r", "--reconcile", "-", "--patch", "/etc/hostname"], message: "--patch cannot be combined with --reconcile" },
    { name: "--reconcile with --dry-run", argv: ["--root", "/r", "--reconcile", "-", "--dry-run"], message: "--dry-run cannot be combined with --reconcile" },
    { name: "--reconcile with --expect", argv: ["--root", "/r", "--reconcile", "-", "--expect", `a.txt=${SHA}`], message: "--expect cannot be combined" },
    { name: "--reconcile with --matching", argv: ["--root", "/r", "--reconcile", "-", "--matching", "exact"], message: "--matching cannot be combined" },
    // parseArgs kept the last one: the run went to /s without a word
    { name: "--root twice", argv: ["--root", "/r", "--root", "/s"], message: "--root is given 2 times; give it once" },
    { name: "--matching twice (= form)", argv: ["--root", "/r", "--matching=exact", "--matching=lenient"], message: "--matching is given 2 times; give it once" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const parsed = parseApplyArgs(c.argv);
      expect(parsed.kind).toBe("usage_error");
      if (parsed.kind === "usage_error") expect(parsed.message).toContain(c.message);
    });
  }
});

describe("parseApplyArgs: an unknown flag is named with the closest flag (issue 26 item 3)", () => {
  const cases: { name: string; argv: string[]; message: string }[] = [
    { name: "--dryrun (lower case)", argv: ["--root", "/r", "--dryrun"], message: "unknown flag --dryrun: did you mean --dry-run? nothing was applied (see --help)" },
    { name: "--dry_run (snake_case)", argv: ["--root", "/r", "--dry_run"], message: "unknown flag --dry_run: did you mean --dry-run?" },
    { name: "--dryRun (camelCase)", argv: ["--root", "/r", "--dryRun"], message: "unknown flag --dryRun: did you mean --dry-run?" },
    { name: "--expectedSha256=… (camelCase, inline value)", argv: ["--root", "/r", `--expectedSha256=a.txt=${SHA}`], message: "unknown flag --expectedSha256: did you mean --expect?" },
    { name: "--timeout (a prefix)", argv: ["--root", "/r", "--timeout", "5"], message: "did you mean --timeout-ms?" },
    { name: "a short flag that does not exist", argv: ["--root", "/r", "-n"], message: "unknown flag -n; the flags are --root, --patch, --dry-run" },
    { name: "two of them", argv: ["--dryrun", "--root", "/r", "--jsn"], message: "unknown flags --dryrun (did you mean --dry-run?), --jsn (did you mean --json?)" },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const parsed = parseApplyArgs(c.argv);
      expect(parsed).toEqual({ kind: "usage_error", message: expect.stringContaining(c.message) });
    });
  }

  test("a string flag's value that looks like a flag is a value; after -- everything is positional", () => {
    expect(parseApplyArgs(["--root=--dryrun"]).kind).toBe("run"); // a root named --dryrun
    expect(parseApplyArgs(["--root", "/r", "--matching", "--exact"])).toMatchObject({ kind: "usage_error", message: expect.not.stringContaining("unknown flag") });
    const parsed = parseApplyArgs(["--root", "/r", "--", "--dryrun"]);
    expect(parsed.kind === "usage_error" && parsed.message).toContain('unexpected argument "--dryrun"');
  });
});

describe("parseApplyArgs valid flags", () => {
  test("--reconcile FILE or - (stdin), with the connection flags", () => {
    const parsed = parseApplyArgs(["--root", "/srv/site", "--ssh", "web1", "--sudo", "--reconcile", "-", "--json"]);
    expect(parsed.kind).toBe("run");
    if (parsed.kind === "run") expect(parsed.options).toMatchObject({ root: "/srv/site", reconcileFile: "-", sudo: true, json: true });
    const fromFile = parseApplyArgs(["--root", "/srv/site", "--reconcile", "/etc/hostname"]);
    expect(fromFile.kind === "run" && fromFile.options.reconcileFile).toBe("/etc/hostname");
  });

  test("-h and --help ask for the usage (an unknown flag next to them is still an error)", () => {
    expect(parseApplyArgs(["--bogus-but-help", "-h"]).kind).toBe("usage_error");
    expect(parseApplyArgs(["--root", "/r", "-h"])).toEqual({ kind: "help" });
    expect(parseApplyArgs(["--help"])).toEqual({ kind: "help" });
  });

  test("a local run: relative root resolved, defaults off, --expect collected (path may contain =, SHA lowercased)", () => {
    const parsed = parseApplyArgs(["--root", "site", "--expect", `a=b.txt=${SHA.toUpperCase()}`, "--expect", `c.txt=${SHA}`, "--dry-run", "--json"]);
    expect(parsed).toEqual({
      kind: "run",
      options: {
        root: resolve("site"),
        dryRun: true,
        json: true,
        expectedSha256: { "a=b.txt": SHA, "c.txt": SHA },
        requireShaForDelete: false,
        identityFiles: [],
        acceptNewHostKey: false,
        sudo: false,
      },
    });
  });

  test("an ssh run: destination parsed, identities repeated, --sudo-password-env implies sudo", () => {
    process.env.SAP_ARGS_TEST_PW = "x";
    try {
      const parsed = parseApplyArgs([
        "--root", "/srv/site", "--ssh", "deploy@web1:2222", "--identity", "/etc/hostname", "--identity", "/etc/passwd",
        "--known-hosts", "/tmp/kh", "--accept-new-host-key", "--sudo-password-env", "SAP_ARGS_TEST_PW",
        "--matching", "exact", "--require-sha-for-delete", "--timeout-ms", "5000", "--patch", "/etc/hostname",
      ]);
      expect(parsed).toEqual({
        kind: "run",
        options: {
          root: "/srv/site",
          patchFile: "/etc/hostname",
          dryRun: false,
          json: false,
          expectedSha256: {},
          matching: "exact",
          requireShaForDelete: true,
          timeoutMs: 5000,
          ssh: { text: "deploy@web1:2222", destination: { user: "deploy", host: "web1", port: 2222 } },
          identityFiles: ["/etc/hostname", "/etc/passwd"],
          knownHostsFile: "/tmp/kh",
          acceptNewHostKey: true,
          sudo: true,
          sudoPasswordEnv: "SAP_ARGS_TEST_PW",
        },
      });
    } finally {
      delete process.env.SAP_ARGS_TEST_PW;
    }
  });

  test("an alias destination stays a bare host for ssh_config to resolve", () => {
    const parsed = parseApplyArgs(["--root", "/srv", "--ssh", "harbour"]);
    expect(parsed.kind === "run" && parsed.options.ssh).toEqual({ text: "harbour", destination: { host: "harbour" } });
  });
});

describe("--expect and --host-expect: every name is a key like any other, and one path has one SHA", () => {
  // On a plain {} a path named __proto__ was dropped by the prototype setter,
  // and a host named `constructor` found Object itself: both preconditions vanished.
  const OTHER = "cd".repeat(32);
  test("a path named __proto__ or constructor keeps its --expect", () => {
    const parsed = parseApplyArgs(["--root", "/r", "--expect", `__proto__=${SHA}`, "--expect", `constructor=${OTHER}`]);
    if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed));
    expect(Object.entries(parsed.options.expectedSha256)).toEqual([["__proto__", SHA], ["constructor", OTHER]]);
  });
  test("a host named constructor (or toString) keeps its --host-expect; nothing lands on Object", () => {
    const parsed = parseApplyArgs(["--hosts", "constructor=/tmp,toString=/tmp", "--host-expect", `constructor=__proto__=${SHA}`]);
    if (parsed.kind !== "run") throw new Error(JSON.stringify(parsed));
    const hostExpect = parsed.options.fleet!.hostExpect;
    expect(Object.keys(hostExpect)).toEqual(["constructor"]);
    expect(Object.entries(hostExpect.constructor!)).toEqual([["__proto__", SHA]]);
    expect(hostExpect.toString).toBeUndefined();
  });
  const twice: { name: string; argv: string[]; message: string }[] = [
    { name: "--expect", argv: ["--root", "/r", "--expect", `a.txt=${SHA}`, "--expect", `a.txt=${OTHER}`], message: `--expect "a.txt" is given twice with different SHA-256s` },
    { name: "--host-expect", argv: ["--hosts", "a=/tmp", "--host-expect", `a=x=${SHA}`, "--host-expect", `a=x=${OTHER}`], message: `--host-expect "a=x" is given twice with different SHA-256s` },
  ];
  for (const c of twice) {
    test(`${c.name} twice for one path with different SHAs is refused (not last-wins)`, () => {
      const parsed = parseApplyArgs(c.argv);
      expect(parsed.kind).toBe("usage_error");
      expect(parsed.kind === "usage_error" && parsed.message).toContain(c.message);
    });
  }
});
