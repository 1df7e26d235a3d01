import { test } from "bun:test";
import { commitRemote } from "../lib/remote/commit.ts";
import { LocalShell } from "../lib/remote/local_shell.ts";
import { makeTree, P, plan } from "./support/local_trees.ts";
test("time", async () => {
  for (const gated of [true, false, true, false]) {
    const shell = new LocalShell({ shell: ["dash"] });
    if (!gated) Object.defineProperty(shell, "stdinGate", { value: false });
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) {
      const root = makeTree({ "a.txt": "a1\n" });
      const r = await commitRemote(shell, root, plan([P.update("a.txt", "a1\n", "a2\n")]));
      if (!r.ok) throw new Error(JSON.stringify(r));
    }
    console.log(gated, ((performance.now() - t0) / 10).toFixed(1), "ms");
  }
}, 60_000);
