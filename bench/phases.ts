/**
 * Where the whole-process time of a local apply goes (issue 31): the CLI's
 * own steps timed from inside, and its processes counted from outside.
 *
 * 1. **In-process phases**: a fresh `bun bench/phases.ts --child …` process
 *    does what `examples/apply.ts --root DIR` does for a local apply —
 *    load the CLI's modules, read the patch, `applyPatch` through
 *    `LocalShell` — with a timing wrapper around the shell (each exec: its
 *    program, stdin size and wall time) and `performance.now()` marks: Bun's
 *    start-up (process start → first line), module load, snapshot (its
 *    program, then the local read and its SHA-256), plan (the new content's
 *    SHA-256 timed apart), commit (its program), exit. The library is not
 *    instrumented: the marks are the calls the CLI makes.
 * 2. **The CLI itself under `strace -f -c -e trace=execve,clone,clone3,fork,vfork`**
 *    (when strace exists): how many processes the real CLI starts.
 * 3. **Module load**: which modules the CLI's import graph loads
 *    (`bun build --metafile`, no output kept), and whether the SSH stack or
 *    the MCP SDK is among them.
 *
 * Usage: `npx bun bench/phases.ts [--quick] [--rounds=N]` (default 5; the
 * medians are printed, with the load average). Not part of `npm run bench`:
 * a diagnostic, not a target.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const repoRoot = resolve(import.meta.dir, "..");

if (process.argv[2] === "--child") {
  // performance.now() counts from this process's start (timeOrigin).
  const marks: [string, number][] = [["start-up (process start → first line)", performance.now()]];
  const [, , , root, patchFile] = process.argv;
  const mod = await import("../mod.ts");
  await import("../examples/cli/args.ts");
  await import("../examples/cli/hint_words.ts");
  await import("../examples/cli/report_text.ts");
  await import("../examples/wire/convert.ts");
  marks.push(["module load (mod.ts and the CLI's modules)", performance.now()]);
  const patch = readFileSync(patchFile!, "utf8");
  const inner = new mod.LocalShell();
  const execs: { what: string; ms: number; stdin: number; at: number }[] = [];
  // Everything but exec goes to the LocalShell itself (its local file
  // access reads private fields: through a prototype copy it would fail and
  // the snapshot would pipe the file through the program instead).
  const timedExec: typeof inner.exec = async (command, options) => {
    const t = performance.now();
    try {
      return await inner.exec(command, options);
    } finally {
      const what = /sap_commit|commit/.test(command) ? "commit program" : /snapshot|sap_snap/.test(command) ? "snapshot program" : command.slice(0, 40);
      execs.push({ what, ms: performance.now() - t, stdin: options?.stdin?.length ?? 0, at: t });
    }
  };
  const wrapped = new Proxy(inner, {
    get(target, key) {
      if (key === "exec") return timedExec;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const t0 = performance.now();
  const report = await mod.applyPatch(wrapped, { root: root!, patch });
  marks.push(["applyPatch (snapshot + plan + commit)", performance.now()]);
  if (!report.ok) throw new Error(JSON.stringify(report.errors).slice(0, 400));
  // The SHA-256 of the 38.5 MB file, timed alone on the bytes now in hand (the client does it twice: snapshot, new content).
  const bytes = readFileSync(join(root!, report.files[0]!.path));
  const s = performance.now();
  mod.sha256Hex(bytes);
  const shaMs = performance.now() - s;
  const programsMs = execs.reduce((n, e) => n + e.ms, 0);
  // The client's own steps, between the programs: parse before the first,
  // read + SHA-256 + plan + the commit's preparation between them, the report after the last.
  const gaps: [string, number][] = [];
  let cursor = t0;
  for (const [i, e] of execs.entries()) {
    gaps.push([i === 0 ? "client: parse, before the snapshot program" : `client: after the ${execs[i - 1]!.what}, before the ${e.what} (local read, SHA-256, plan, commit preparation)`, e.at - cursor]);
    cursor = e.at + e.ms;
  }
  gaps.push(["client: after the last program (report)", marks.at(-1)![1] - cursor]);
  const out = {
    marks: marks.map(([name, at], i) => [name, i === 0 ? at : at - marks[i - 1]![1]] as const),
    gaps,
    execs,
    applyMs: marks.at(-1)![1] - t0,
    programsMs,
    inClientMs: marks.at(-1)![1] - t0 - programsMs,
    shaMs,
  };
  console.log(JSON.stringify(out));
  process.exit(0);
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[(s.length >> 1) - 1]! + s[s.length >> 1]!) / 2;
}

const quick = process.argv.includes("--quick");
const rounds = Number(process.argv.find((a) => a.startsWith("--rounds="))?.slice(9) ?? 5);
const { FULL_SIZES, QUICK_SIZES, SEED } = await import("./suite.ts");
const { codeFixtures, defaultCacheDir } = await import("./fixtures.ts");
const sizes = quick ? QUICK_SIZES : FULL_SIZES;
const fixture = codeFixtures(sizes.large, SEED, defaultCacheDir()).patches.get(`code-${sizes.large}-c3`)!;
const scratch = mkdtempSync(join(tmpdir(), "sap-phases-"));
const master = join(scratch, "master");
writeFileSync(master, fixture.file.bytes);
const patchFile = join(scratch, "patch");
writeFileSync(patchFile, fixture.text);
const fresh = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "sap-phases-root-"));
  mkdirSync(dirname(join(dir, fixture.file.path)), { recursive: true });
  copyFileSync(master, join(dir, fixture.file.path));
  return dir;
};
console.log(`## Phases of a local apply: ${fixture.file.bytes.length} bytes, ${fixture.chunks} chunks, ${rounds} rounds, load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);
const rows = new Map<string, number[]>();
const add = (name: string, v: number) => rows.set(name, [...(rows.get(name) ?? []), v]);
const wall: number[] = [];
for (let r = 0; r < rounds; r++) {
  const dir = fresh();
  try {
    const t = performance.now();
    const child = spawnSync(process.execPath, [import.meta.path, "--child", dir, patchFile], { encoding: "utf8" });
    wall.push(performance.now() - t);
    if (child.status !== 0) throw new Error(child.stderr);
    const got = JSON.parse(child.stdout.trim().split("\n").pop()!);
    for (const [name, ms] of got.marks) add(name, ms);
    for (const e of got.execs) add(`  of which the ${e.what} (exec, wall)`, e.ms);
    add("  of which in this process (apply minus programs)", got.inClientMs);
    for (const [name, ms] of got.gaps) add(`    ${name}`, ms);
    add("one SHA-256 of the file in this process (the client does two)", got.shaMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log("| phase | median (ms) | min | max |\n|---|---:|---:|---:|");
console.log(`| whole process (spawn → exit) | ${median(wall).toFixed(1)} | ${Math.min(...wall).toFixed(1)} | ${Math.max(...wall).toFixed(1)} |`);
for (const [name, v] of rows) console.log(`| ${name} | ${median(v).toFixed(1)} | ${Math.min(...v).toFixed(1)} | ${Math.max(...v).toFixed(1)} |`);

// 2. Processes the real CLI starts.
if (spawnSync("sh", ["-c", "command -v strace"]).status === 0) {
  const dir = fresh();
  try {
    const trace = join(scratch, "strace");
    const r = spawnSync("strace", ["-f", "-qq", "-e", "trace=execve", "-o", trace, process.execPath, join(repoRoot, "examples", "apply.ts"), "--root", dir], { input: fixture.text });
    if (r.status !== 0) throw new Error(String(r.stderr));
    const execs = readFileSync(trace, "utf8").split("\n").filter((l) => /execve\(/.test(l) && !/ENOENT/.test(l));
    const names = new Map<string, number>();
    for (const l of execs) {
      const m = /execve\("([^"]+)"/.exec(l);
      const base = m ? m[1]!.split("/").pop()! : "?";
      names.set(base, (names.get(base) ?? 0) + 1);
    }
    console.log(`\nexecve calls by the CLI and its children (strace -f, the CLI's own included): ${execs.length} — ${[...names].sort((a, b) => b[1] - a[1]).map(([n, c]) => `${n} ${c}`).join(", ")}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// 3. What the CLI's import graph loads.
const meta = join(scratch, "meta.json");
const built = spawnSync(process.execPath, ["build", join(repoRoot, "examples", "apply.ts"), "--target=bun", `--outdir=${join(scratch, "out")}`, `--metafile=${meta}`, "--packages=external"], { encoding: "utf8" });
if (built.status === 0) {
  const graph = JSON.parse(readFileSync(meta, "utf8")) as { inputs: Record<string, { bytes: number; imports: { path: string; external?: boolean }[] }> };
  const inputs = Object.keys(graph.inputs);
  const externals = new Set(Object.values(graph.inputs).flatMap((i) => i.imports.filter((x) => x.external).map((x) => x.path)));
  const bytes = Object.values(graph.inputs).reduce((n, i) => n + i.bytes, 0);
  console.log(`\nstatic import graph of examples/apply.ts: ${inputs.length} of our modules (${(bytes / 1024).toFixed(0)} KiB of source); packages: ${[...externals].filter((p) => !p.startsWith("node:")).join(", ") || "none"}; lib/ssh modules: ${inputs.filter((p) => p.includes("lib/ssh/")).length}; MCP: ${inputs.filter((p) => p.includes("mcp")).length}`);
} else {
  console.log(`\nbun build --metafile failed: ${built.stderr.slice(0, 200)}`);
}
rmSync(scratch, { recursive: true, force: true });
