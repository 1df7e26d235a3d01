// The generic co-tenant attacker of the hardening campaign (issue 12, SPEC
// §6.1), plain JavaScript with node: APIs only (the campaign runs it with
// the test runtime). It runs as ANOTHER uid (setpriv) with write access to one shared
// directory of the root, and does everything such a user can:
// - watches the directory (fs.watch = inotify, plus a tight readdir poll)
//   and instantly swaps every NEW entry for a symlink to outside the root
//   (a directory, a root-only file, a dangling name, a FIFO it holds, a
//   device), keeping the original under `<name>.stolen.<n>`; sometimes puts
//   the original back a little later, sometimes plants a FIFO instead;
// - reads /proc/*/cmdline of every process and plants, before they exist,
//   the names it can predict from them: everything a command line reveals
//   (`.sap-…` arguments) and the names the old engine derived from the
//   operation id (`.sap-<op>.blob`, `.journal`, `-<i>.bak`, `.stage`, `.d`,
//   `.sap-lock-tmp-<op>-<k>`, `.sap-lock-op-<op>`);
// - keeps toggling the targets of its own symlinks.
// Names that were already there before (the files the patches update) are
// left alone: the attacker goes after what the engine creates.
//
// Every FIFO it plants is held open read-write (non-blocking) by the
// attacker: the engine opening one for writing would not block, and every
// byte written into it is counted (`fifoBytes`: must stay 0); opening one
// for reading would block forever (a hang the campaign sees as a timeout).
//
// Usage: bun co_tenant_attacker.mjs <shared dir> <outside dir> <den> <seed> <stop file> <log file> [swap probability]
// It writes its counts as JSON to the log file now and then, and when the stop file appears
// a last time with "stopped": 1, then exits;
// every name it stole (and may put back later) is appended to "<log file>.restored"
// as it goes (the engine cannot know an entry of its own reappeared after it finished).
import { spawnSync } from "node:child_process";
import { appendFileSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, symlinkSync, unlinkSync, watch, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

const [shared, outside, den, seedText, stopFile, logFile, swapText] = process.argv.slice(2);
const swapProbability = swapText === undefined ? 1 : Number(swapText);
let seed = Number(seedText) >>> 0 || 1;
const rand = () => {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return seed / 0x100000000;
};
const pick = (list) => list[Math.floor(rand() * list.length)];

const counts = { fifosRetired: 0, swaps: 0, swapFailed: 0, plantsFromProc: 0, plantsPredicted: 0, fifosPlanted: 0, toggles: 0, restores: 0, procSeen: 0, fifoBytes: 0, newEntries: 0 };
// fds of the FIFOs, open read-write, oldest first. Bounded: thousands of
// FIFOs are planted over a long campaign and the engine unlinks most of
// them, so holding every one ran the attacker out of file descriptors
// (EMFILE) and the rest of the campaign attacked nothing. Past MAX_HELD the
// oldest planted ones are drained and closed (one still planted then blocks
// an opener for reading or writing: a trap just as real).
const MAX_HELD = 400;
const held = [];
const own = new Set(); // names the attacker made itself
const stolen = new Map(); // name -> stolen name, for restores
let known = new Set(readdirSync(shared));
let serial = 0;

mkdirSync(den, { recursive: true });
let fifos = [];
const makeFifos = (n) => {
  const names = Array.from({ length: n }, () => join(den, `fifo-${process.pid}-${serial++}`));
  spawnSync("mkfifo", names);
  retire(n);
  for (const p of names) {
    if (!existsSync(p)) continue;
    try {
      held.push({ fd: openSync(p, constants.O_RDWR | constants.O_NONBLOCK), path: p });
      fifos.push(p);
    } catch {
      // not a FIFO after all
    }
  }
};
const drain = () => {
  const buf = Buffer.alloc(65536);
  for (const { fd } of held) {
    for (;;) {
      let n = 0;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch {
        break; // EAGAIN: empty
      }
      if (n <= 0) break;
      counts.fifoBytes += n;
    }
  }
};
// Room for n more: drain everything, then close the oldest planted FIFOs.
function retire(n) {
  if (held.length + n <= MAX_HELD) return;
  drain();
  const unplanted = new Set(fifos);
  for (let i = 0; i < held.length && held.length + n > MAX_HELD; ) {
    if (unplanted.has(held[i].path)) {
      i++;
      continue;
    }
    try {
      closeSync(held[i].fd);
    } catch {
      // already gone
    }
    held.splice(i, 1);
    counts.fifosRetired++;
  }
}
// The counts as they stand, written whole (a temporary renamed over the
// log), so a reader never sees half a record, even if this process dies.
function report() {
  writeFileSync(`${logFile}.tmp`, JSON.stringify(counts));
  renameSync(`${logFile}.tmp`, logFile);
}
makeFifos(40);

const targets = () => [
  join(outside, "dir"),
  join(outside, "secret.txt"),
  join(outside, "target.txt"),
  join(outside, "home/.ssh"),
  join(outside, `dangling-${serial++}`),
  join(outside, "dir", `dangling-${serial++}`),
  "/dev/zero",
  "/dev/full",
];

function plantSymlink(name) {
  try {
    symlinkSync(pick(targets()), join(shared, name));
    own.add(name);
    return true;
  } catch {
    return false;
  }
}

function plantFifo(name) {
  if (fifos.length === 0) return false;
  const fifo = fifos.pop();
  try {
    renameSync(fifo, join(shared, name));
    own.add(name);
    counts.fifosPlanted++;
    return true;
  } catch {
    return false;
  }
}

function plant(name) {
  return rand() < 0.3 ? plantFifo(name) || plantSymlink(name) : plantSymlink(name);
}

function attackNew(name) {
  if (own.has(name) || name.includes(".stolen.")) return;
  counts.newEntries++;
  if (rand() >= swapProbability) return;
  const away = `${name}.stolen.${serial++}`;
  try {
    renameSync(join(shared, name), join(shared, away));
  } catch {
    counts.swapFailed++;
    plant(name); // gone already, or not ours to rename (sticky): plant what we can
    return;
  }
  counts.swaps++;
  appendFileSync(`${logFile}.restored`, `${name}\n`);
  if (!plant(name)) return;
  if (rand() < 0.3) stolen.set(name, away);
}

function predicted(op) {
  const names = [`.sap-${op}.blob`, `.sap-${op}.journal`, `.sap-lock-op-${op}`];
  for (let i = 0; i < 4; i++) names.push(`.sap-${op}-${i}.bak`, `.sap-${op}-${i}.stage`, `.sap-${op}-${i}.d`, `.sap-${op}-${i}-src.d`, `.sap-lock-tmp-${op}-${i}`);
  return names;
}

const seenPids = new Set();
function scanProc() {
  let pids;
  try {
    pids = readdirSync("/proc").filter((n) => /^[0-9]+$/.test(n));
  } catch {
    return;
  }
  for (const pid of pids) {
    if (seenPids.has(pid)) continue;
    seenPids.add(pid);
    let cmd;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "latin1");
    } catch {
      continue;
    }
    if (!cmd.includes(".sap-") && !cmd.includes("SAP-BEGIN")) continue;
    counts.procSeen++;
    const op = /set -- '[^']*' '([A-Za-z0-9_]{1,64})'/.exec(cmd)?.[1];
    if (op) for (const name of predicted(op)) if (!existsSync(join(shared, name)) && plant(name)) counts.plantsPredicted++;
    for (const arg of cmd.split("\0")) {
      if (!arg.includes(".sap-") || arg.length > 300) continue;
      const name = basename(arg);
      if (!name.startsWith(".sap-") || name.includes("XXXXXX")) continue;
      try {
        lstatSync(join(shared, name));
      } catch {
        if (plant(name)) counts.plantsFromProc++;
      }
    }
  }
}

function scanDir() {
  let now;
  try {
    now = readdirSync(shared);
  } catch {
    return;
  }
  for (const name of now) if (!known.has(name)) attackNew(name);
  known = new Set(now);
}

function toggle() {
  for (const name of own) {
    if (rand() > 0.2) continue;
    const path = join(shared, name);
    try {
      if (!lstatSync(path).isSymbolicLink()) continue;
      unlinkSync(path);
      symlinkSync(pick(targets()), path);
      counts.toggles++;
    } catch {
      own.delete(name);
    }
  }
  for (const [name, away] of stolen) {
    if (rand() > 0.3) continue;
    stolen.delete(name);
    try {
      unlinkSync(join(shared, name));
      renameSync(join(shared, away), join(shared, name));
      own.delete(name);
      counts.restores++;
      appendFileSync(`${logFile}.restored`, `${name}\n`);
    } catch {
      // the engine moved on
    }
  }
}

try {
  watch(shared, { persistent: true }, (_event, name) => {
    if (typeof name === "string" && !known.has(name)) {
      try {
        lstatSync(join(shared, name));
        attackNew(name);
        known.add(name);
      } catch {
        // gone again
      }
    }
  });
} catch {
  // inotify unavailable: the poll alone
}

let ticks = 0;
const loop = () => {
  if (existsSync(stopFile)) {
    drain();
    counts.stopped = 1;
    report();
    rmSync(den, { recursive: true, force: true });
    process.exit(0);
  }
  scanDir();
  scanProc();
  if (++ticks % 3 === 0) toggle();
  if (ticks % 50 === 0) drain();
  if (ticks % 500 === 0) report();
  if (fifos.length < 10) makeFifos(20);
  setTimeout(loop, 1);
};
loop();
