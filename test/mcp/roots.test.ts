import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadRoots } from "../../examples/mcp/roots.ts";
import type { RootConfig } from "../../examples/mcp/roots.ts";
import { sshOptionsOf } from "../../examples/mcp/pool.ts";

// Made at load time: the tables below name paths inside it.
const work = mkdtempSync(join(tmpdir(), "sap-roots-"));
beforeAll(() => {
  mkdirSync(join(work, "site"));
  mkdirSync(join(work, "conf", "docs"), { recursive: true });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function roots(argv: string[]): RootConfig[] {
  const result = loadRoots(argv, work);
  if (result === "help") throw new Error("unexpected help");
  return result;
}

function configFile(content: unknown, name = "roots.json"): string {
  const path = join(work, "conf", name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("roots from --root flags", () => {
  const cases: { name: string; argv: string[]; expected: Partial<RootConfig>[] }[] = [
    { name: "a relative local directory becomes absolute", argv: ["--root", "site=./site"], expected: [{ name: "site", kind: "local", path: join(work, "site"), options: {} }] },
    { name: "--root=NAME=LOCATION form", argv: ["--root=site=site"], expected: [{ name: "site", kind: "local" }] },
    {
      name: "ssh with user, port and path",
      argv: ["--root", "app=ssh://deploy@web1:2222/srv/app/"],
      expected: [{ name: "app", kind: "ssh", path: "/srv/app", ssh: { user: "deploy", host: "web1", port: 2222 }, label: "ssh://deploy@web1:2222/srv/app" }],
    },
    { name: "ssh to an ssh_config alias", argv: ["--root", "app=ssh://web1/srv/app"], expected: [{ kind: "ssh", ssh: { host: "web1" }, path: "/srv/app" }] },
    {
      name: "per-root options in the query",
      argv: ["--root", "app=ssh://web1/srv?matching=exact&sudo=1&requireShaForDelete=true&createParents=0&maxFileBytes=1000&timeoutMs=5000&sshConfigFile=none&hostKeyPolicy=accept-new&identityFile=keys/id"],
      expected: [{
        path: "/srv",
        options: {
          matching: "exact",
          sudo: true,
          requireShaForDelete: true,
          createParents: false,
          limits: { maxFileBytes: 1000 },
          timeoutMs: 5000,
          sshConfigFile: false,
          hostKeyPolicy: "accept-new",
          identityFile: join(work, "keys/id"),
        },
      }],
    },
    { name: "a local root with matching", argv: ["--root", "site=site?matching=whitespace"], expected: [{ kind: "local", options: { matching: "whitespace" } }] },
    { name: "several roots keep their order", argv: ["--root", "b=site", "--root", "a=ssh://h/x"], expected: [{ name: "b" }, { name: "a" }] },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const got = roots(c.argv);
      expect(got).toHaveLength(c.expected.length);
      c.expected.forEach((e, i) => expect(got[i]).toMatchObject(e));
    });
  }

  test("--help", () => expect(loadRoots(["--help"], work)).toBe("help"));

  test("an ssh root's connectSsh options", () => {
    const [root] = roots(["--root", "app=ssh://deploy@127.0.0.1:2200/srv?sudo=1&knownHostsFile=~/kh&proxyJump=jump"]);
    expect(sshOptionsOf(root!)).toEqual({
      host: "127.0.0.1",
      allowProxyCommand: true, // the operator's ssh_config ProxyCommand runs, as with ssh
      port: 2200,
      username: "deploy",
      knownHostsFile: join(homedir(), "kh"),
      proxyJump: "jump",
      sudo: true,
    });
  });

  test("sudoPasswordEnv: sudo -S with the variable's value, read when sudo asks (never stored in the root)", async () => {
    const name = `SAP_TEST_SUDO_PW_${process.pid}`;
    process.env[name] = "first";
    try {
      const [root] = roots(["--root", `app=ssh://h/srv?sudoPasswordEnv=${name}`]);
      expect(root!.options).toEqual({ sudoPasswordEnv: name });
      expect(JSON.stringify(root)).not.toContain("first");
      const sudo = sshOptionsOf(root!).sudo as { password: () => Promise<string> };
      expect(await sudo.password()).toBe("first");
      process.env[name] = "rotated";
      expect(await sudo.password()).toBe("rotated");
    } finally {
      delete process.env[name];
    }
  });
});

describe("roots from a config file", () => {
  test("string and object entries; relative paths resolve against the file's directory", () => {
    const file = configFile({
      roots: {
        docs: "./docs",
        app: { location: "ssh://deploy@web1/srv/app", matching: "exact", requireShaForDelete: true, knownHostsFile: "kh", limits: { maxFiles: 5 } },
      },
    });
    const got = roots(["--config", file, "--root", "site=site"]);
    expect(got.map((r) => r.name)).toEqual(["docs", "app", "site"]);
    expect(got[0]).toMatchObject({ kind: "local", path: join(work, "conf", "docs") });
    expect(got[1]).toMatchObject({
      kind: "ssh",
      path: "/srv/app",
      options: { matching: "exact", requireShaForDelete: true, knownHostsFile: join(work, "conf", "kh"), limits: { maxFiles: 5 } },
    });
  });
});

describe("configuration errors say what is wrong", () => {
  const cases: { name: string; argv: () => string[]; says: RegExp }[] = [
    { name: "no roots", argv: () => [], says: /no roots configured/ },
    { name: "unknown flag", argv: () => ["--rooot", "a=b"], says: /unknown argument "--rooot"/ },
    { name: "flag without value", argv: () => ["--root"], says: /--root needs a value/ },
    { name: "no name", argv: () => ["--root", "./site"], says: /write --root NAME=LOCATION/ },
    { name: "duplicate names", argv: () => ["--root", "a=site", "--root", "a=site"], says: /root "a" is configured twice/ },
    { name: "missing local directory", argv: () => ["--root", "a=./nope"], says: /local directory .*nope does not exist/ },
    { name: "scp-style location hints at ssh://", argv: () => ["--root", "a=deploy@web1:/srv"], says: /For an SSH root write ssh:\/\// },
    { name: "ssh without a path", argv: () => ["--root", "a=ssh://web1"], says: /is not ssh:\/\/\[user@\]host\[:port\]\/absolute\/path/ },
    { name: "bad option value", argv: () => ["--root", "a=site?matching=fuzzy"], says: /matching: Invalid option: expected one of "exact"\|"whitespace"\|"lenient"/ },
    { name: "unknown query option", argv: () => ["--root", "a=site?matchng=exact"], says: /unknown option `matchng`: did you mean `matching`\?/ },
    { name: "unknown query option, no near one", argv: () => ["--root", "a=site?colour=red"], says: /unknown option `colour`; the options are `matching`, `sharedDirectories`/ },
    // the last one won without a word
    { name: "a query option given twice", argv: () => ["--root", "a=site?matching=exact&matching=lenient"], says: /--root a: option `matching` is given twice; give it once/ },
    { name: "a limit given twice (percent-encoded name)", argv: () => ["--root", "a=site?maxFiles=5&%6daxFiles=500"], says: /option `maxFiles` is given twice/ },
    { name: "ssh-only option on a local root", argv: () => ["--root", "a=site?sudo=1"], says: /local directory: sudo applies to ssh:\/\/ roots only/ },
    { name: "sudoPasswordEnv naming an unset variable", argv: () => ["--root", "a=ssh://h/x?sudoPasswordEnv=SAP_TEST_UNSET_VAR"], says: /sudoPasswordEnv SAP_TEST_UNSET_VAR: that environment variable is not set/ },
    { name: "sudoPasswordEnv with sudo=0", argv: () => ["--root", "a=ssh://h/x?sudoPasswordEnv=HOME&sudo=0"], says: /sudoPasswordEnv means sudo/ },
    { name: "sudoPasswordEnv not a variable name", argv: () => ["--root", "a=ssh://h/x?sudoPasswordEnv=A-B"], says: /sudoPasswordEnv: an environment variable name/ },
    { name: "sudoPasswordEnv on a local root", argv: () => ["--root", "a=site?sudoPasswordEnv=HOME"], says: /local directory: sudoPasswordEnv applies to ssh:\/\/ roots only/ },
    { name: "not a number", argv: () => ["--root", "a=site?maxFiles=many"], says: /limits\.maxFiles/ },
    { name: "config: unreadable file", argv: () => ["--config", join(work, "missing.json")], says: /cannot read it/ },
    { name: "config: invalid JSON", argv: () => ["--config", configFile("{roots:", "bad.json")], says: /not valid JSON/ },
    { name: "config: unknown key", argv: () => ["--config", configFile({ roots: { a: { location: "./docs", sudoo: true } } }, "typo.json")], says: /roots\.a: unknown option `sudoo`: did you mean `sudo`\?/ },
    { name: "config: misspelt limits key", argv: () => ["--config", configFile({ roots: { a: { location: "./docs", limits: { maxFileByte: 5 } } } }, "limits.json")], says: /roots\.a\.limits: unknown option `maxFileByte`: did you mean `maxFileBytes`\?/ },
    { name: "config: misspelt location", argv: () => ["--config", configFile({ roots: { a: { locaton: "./docs" } } }, "loc.json")], says: /unknown option `locaton`: did you mean `location`\?/ },
    { name: "config: bad root name", argv: () => ["--config", configFile({ roots: { "a b": "./docs" } }, "name.json")], says: /root name "a b": a root NAME is letters/ },
    { name: "config: roots missing", argv: () => ["--config", configFile({ root: {} }, "shape.json")], says: /roots: Invalid input/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      let error: unknown;
      try {
        loadRoots(c.argv(), work);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(c.says);
    });
  }
});
