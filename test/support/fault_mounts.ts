/**
 * FAULT INJECTION with real file systems (root only): a small tmpfs that
 * can be filled to the last byte (disk full), and a read-only bind mount of
 * a directory (a read-only file system). Each is mounted on a fresh temp
 * directory and unmounted by {@linkcode unmountAll} (call it in afterAll).
 *
 * @module
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const mounted: string[] = [];

/** A mounted tmpfs of `sizeKiB` KiB; `fill(leftBytes)` leaves about that much free. */
export interface SmallTmpfs {
  dir: string;
  /** Write a filler file so that about `leftBytes` stay free (0: full). */
  fill(leftBytes: number): void;
  /** Free bytes now (statfs, as df shows them). */
  free(): number;
  /** Remove the filler. */
  unfill(): void;
}

/**
 * Mount a tmpfs of `sizeKiB` KiB (mode 0755, owned by root) on a new temp directory.
 *
 * @example
 * ```ts
 * const fs = smallTmpfs(512); fs.fill(0); // writes now fail ENOSPC
 * ```
 */
export function smallTmpfs(sizeKiB: number): SmallTmpfs {
  const dir = mkdtempSync(join(tmpdir(), "sap-tmpfs-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKiB}k,mode=0755`, "tmpfs", dir]);
  mounted.push(dir);
  const filler = join(dir, "filler");
  const free = (): number => {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  };
  return {
    dir,
    free,
    fill(leftBytes: number): void {
      rmSync(filler, { force: true });
      const size = Math.max(0, free() - leftBytes);
      writeFileSync(filler, new Uint8Array(size));
      // tmpfs counts whole pages: top up byte by byte until nothing fits when asked for 0
      if (leftBytes === 0) {
        try {
          for (let i = 0; i < 64; i++) writeFileSync(filler, new Uint8Array(4096), { flag: "a" });
        } catch {
          // full
        }
      }
    },
    unfill(): void {
      rmSync(filler, { force: true });
    },
  };
}

/**
 * Bind-mount `source` read-only on a new temp directory; returns that directory.
 *
 * @example
 * ```ts
 * const ro = readOnlyBind(root); // writes below ro fail EROFS
 * ```
 */
export function readOnlyBind(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sap-ro-"));
  execFileSync("mount", ["--bind", source, dir]);
  mounted.push(dir);
  execFileSync("mount", ["-o", "remount,bind,ro", dir]);
  return dir;
}

/**
 * Unmount (lazily, so a stuck process cannot keep it) and remove every mount made here.
 *
 * @example
 * ```ts
 * afterAll(unmountAll);
 * ```
 */
export function unmountAll(): void {
  while (mounted.length > 0) {
    const dir = mounted.pop()!;
    try {
      execFileSync("umount", ["-l", dir]);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
