/**
 * The CLI's words for the library's hints (SPEC §5.4 round 2): a failure
 * printed by `examples/apply.ts` names its flags (`--expect PATH=SHA256`,
 * `--accept-new-host-key`, `--matching`), never a library option or an MCP
 * tool. Library words that are already plain ("read lines 3–12 of a.py
 * again") are kept.
 *
 * @module
 */
import { rewordFailure } from "../../mod.ts";
import type { ApplyReport, CommitReport, FailureHint, HintOption, HintWords, PatchFailure, Warning } from "../../mod.ts";

/** What the words depend on in one run. */
export interface CliWordsContext {
  /** This run already reconciled the operation (its verdict is printed below the failure). */
  reconciled?: boolean;
}

/** Flags for the options the CLI has; the others are library-only. */
const FLAGS: Partial<Record<HintOption, (value: FailureHint & { kind: "option" }) => string>> = {
  hostKeyPolicy: (h) => (h.value === "accept-new" ? "--accept-new-host-key" : `a host-key policy this CLI does not offer (${h.says})`),
  matching: (h) => `--matching ${String(h.value ?? "lenient")}`,
  requireShaForDelete: () => "--require-sha-for-delete",
  timeoutMs: (h) => `--timeout-ms ${h.value ?? "N"}`,
  sudo: () => "--sudo",
  sharedDirectories: (h) => `--shared-directories=${String(h.value ?? "allow")}`,
  trustRootAncestors: () => "--trust-root-ancestors",
  encoding: (h) => `--encoding ${String(h.value ?? "latin1")}`,
};

/**
 * The CLI words for hints, for one run.
 *
 * @example
 * ```ts
 * cliWords()({ kind: "option", option: "hostKeyPolicy", value: "accept-new", says: 'hostKeyPolicy: "accept-new"' }); // "--accept-new-host-key"
 * ```
 */
export function cliWords(context: CliWordsContext = {}): HintWords {
  return (hint: FailureHint): string | undefined => {
    switch (hint.kind) {
      case "read":
      case "list":
        return undefined; // the library's words are plain already
      case "path":
        return "fix that header in the patch file and run the command again";
      case "expectedSha256":
        return hint.sha256 === null
          ? `pass --expect ${hint.path}=<SHA-256 of the version you read> (a --dry-run prints each file's current one)`
          : `pass --expect ${hint.path}=${hint.sha256}`;
      case "option": {
        const flag = FLAGS[hint.option];
        return flag ? flag(hint) : `${hint.says} (a library option: this CLI has no flag for it)`;
      }
      case "reconcile": {
        const sentence = hint.says.endsWith(".");
        if (context.reconciled) {
          return sentence ? "The CLI ran reconcile right after; its verdict follows." : "the CLI ran reconcile right after (see below)";
        }
        return sentence
          ? `Do not resend it yet: run this command again with --reconcile and this run's --json report (operation id ${hint.operationId}); it reports each file as applied, not_applied or diverged.`
          : `run this command again with --reconcile and this run's --json report (operation id ${hint.operationId})`;
      }
    }
  };
}

/**
 * A failure in the CLI's words.
 *
 * @example
 * ```ts
 * if (!report.ok) console.log(cliFailure(report.errors[0]).message);
 * ```
 */
export function cliFailure(failure: PatchFailure, context: CliWordsContext = {}): PatchFailure {
  return rewordFailure(failure, cliWords(context));
}

/**
 * A warning in the CLI's words.
 *
 * @example
 * ```ts
 * console.log(cliWarning(report.warnings[0]!).message);
 * ```
 */
export function cliWarning(warning: Warning, context: CliWordsContext = {}): Warning {
  return rewordFailure(warning, cliWords(context));
}

/**
 * A report with every message in the CLI's words (`--json` output): same
 * shape and fields, hints kept (their `says` still holds the library's words).
 *
 * @example
 * ```ts
 * process.stdout.write(JSON.stringify(cliReport(report), null, 2));
 * ```
 */
export function cliReport<T extends ApplyReport | CommitReport>(report: T, context: CliWordsContext = {}): T {
  const words = cliWords(context);
  return {
    ...report,
    warnings: report.warnings.map((w) => rewordFailure(w, words)),
    files: report.files.map((f) => ({ ...f, warnings: f.warnings.map((w) => rewordFailure(w, words)) })),
    ...(report.errors ? { errors: report.errors.map((e) => rewordFailure(e, words)) } : {}),
  };
}
