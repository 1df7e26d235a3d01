/**
 * Client roots (MCP `roots/list`): when the server is started without any
 * `--root`, it serves the local directories the client shares, as the
 * reference filesystem server does, and re-reads them on
 * `notifications/roots/list_changed`. Only `file://` URIs of existing local
 * directories become roots; each gets a name the model passes as `root`
 * (the client's name for it when it is a valid root name, else the
 * directory's base name), made unique with `-2`, `-3`, … .
 *
 * @module
 */
import { statSync } from "node:fs";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import type { RootConfig } from "./roots.ts";

/** A root as the client lists it. */
export interface ClientRoot {
  uri: string;
  name?: string;
}

const ROOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The usable roots and, for the log, why the others were left out. */
export interface ClientRootsResult {
  roots: RootConfig[];
  ignored: string[];
}

/**
 * The client's roots as server roots.
 *
 * @example
 * ```ts
 * rootsFromClient([{ uri: "file:///home/me/project", name: "project" }]).roots[0]!.path; // "/home/me/project"
 * ```
 */
export function rootsFromClient(listed: readonly ClientRoot[]): ClientRootsResult {
  const roots: RootConfig[] = [];
  const ignored: string[] = [];
  for (const root of listed) {
    let path: string;
    try {
      if (!root.uri.startsWith("file://")) throw new Error("not a file:// URI");
      path = fileURLToPath(root.uri);
    } catch (error) {
      ignored.push(`${root.uri}: ${(error as Error).message}`);
      continue;
    }
    // deno-lint-ignore no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(path)) {
      ignored.push(`${root.uri}: the path contains control characters`);
      continue;
    }
    let isDirectory = false;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) {
      ignored.push(`${root.uri}: not an existing local directory`);
      continue;
    }
    const wanted = root.name !== undefined && ROOT_NAME.test(root.name) ? root.name : nameOf(path);
    let name = wanted;
    for (let n = 2; roots.some((r) => r.name === name); n++) name = `${wanted.slice(0, 60)}-${n}`;
    roots.push({ name, kind: "local", path, options: {}, label: path });
  }
  return { roots, ignored };
}

function nameOf(path: string): string {
  const base = basename(path).replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[._-]+/, "").slice(0, 64);
  return base === "" ? "root" : base;
}
