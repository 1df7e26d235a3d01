/**
 * Hints: next steps as data, reworded by each front end (lib/failure.ts,
 * SPEC §5.4 round 2).
 */
import { describe, expect, test } from "bun:test";
import { failure, listHint, optionHint, quotedFailure, readHint, reconcileHint, rewordFailure, shaHint, warning } from "../../lib/failure.ts";
import type { FailureHint } from "../../lib/types.ts";

describe("hint builders: the library's words", () => {
  const cases: { hint: FailureHint; says: string }[] = [
    { hint: readHint("a.py"), says: "read a.py again" },
    { hint: readHint("a.py", 3, 12), says: "read lines 3–12 of a.py again" },
    { hint: readHint("a.py", 7, 7), says: "read line 7 of a.py again" },
    { hint: shaHint("a b.py", null), says: 'pass the SHA-256 of the version you read as expectedSha256 {"a b.py": "<sha256>"}' },
    { hint: shaHint("a.py", "ab".repeat(32)), says: `pass expectedSha256 {"a.py": "${"ab".repeat(32)}"}` },
    { hint: optionHint("hostKeyPolicy", "accept-new"), says: 'hostKeyPolicy: "accept-new"' },
    { hint: optionHint("maxFileBytes", 5), says: "maxFileBytes: 5" },
    { hint: reconcileHint("op1"), says: "call reconcile with operation id op1" },
    { hint: listHint(""), says: "list the root directory" },
    { hint: listHint("src"), says: "list the directory src/" },
  ];
  for (const c of cases) test(`${c.hint.kind}: ${c.says}`, () => expect(c.hint.says).toBe(c.says));
});

describe("rewordFailure", () => {
  const read = readHint("a.py", 3, 12);
  const sha = shaHint("a.py", null);
  const f = failure("context_mismatch", `no match. Next step: ${read.says}, or ${sha.says}.`, { path: "a.py", hunk: 1, hints: [read, sha] });

  test("replaces each hint's span with the front end's words and keeps everything else", () => {
    const out = rewordFailure(f, (h) => (h.kind === "read" ? `call read_file {"path": "${h.path}"}` : undefined));
    expect(out.message).toBe(`context_mismatch: no match. Next step: call read_file {"path": "a.py"}, or ${sha.says}.`);
    expect({ ...out, message: f.message }).toEqual(f);
  });

  test("undefined everywhere, or no hints: the same object", () => {
    expect(rewordFailure(f, () => undefined)).toBe(f);
    const plain = failure("locked", "busy", { operationId: "op1" });
    expect(rewordFailure(plain, () => "x")).toBe(plain);
  });

  test("a span no longer in the message is left alone (rewording twice is rewording once)", () => {
    const words = (h: FailureHint): string => `<${h.kind}>`;
    const once = rewordFailure(f, words);
    expect(once.message).toBe("context_mismatch: no match. Next step: <read>, or <expectedSha256>.");
    expect(rewordFailure(once, words).message).toBe(once.message);
  });

  test("warnings too", () => {
    const settle = reconcileHint("op9");
    const w = warning("cleanup_incomplete", `leftovers; ${settle.says} to remove them.`, { hints: [settle] });
    expect(rewordFailure(w, () => "run --reconcile").message).toBe("leftovers; run --reconcile to remove them.");
  });
});

describe("quotedFailure: a nested cause says its code once", () => {
  test("failure() already prefixes the code; a doubled prefix is collapsed; a bare message gets one", () => {
    expect(quotedFailure(failure("timeout", "no answer"))).toBe("timeout: no answer");
    expect(quotedFailure(failure("connect_failed", "connect_failed: connect_failed: dropped"))).toBe("connect_failed: dropped");
    expect(quotedFailure({ code: "timeout", message: "no answer" })).toBe("timeout: no answer");
  });
});
