/**
 * A template tag for POSIX `sh` source kept inside TypeScript.
 *
 * Shell code is full of `${…}` and backslashes, which a plain template
 * literal would interpolate or unescape. This tag takes the raw text, allows
 * no interpolation at all (so no data can ever be spliced into program text
 * by accident: the type of the values is `never`), and turns the spelling
 * `$\{` back into `${` — the one escape needed to write shell parameter
 * expansions inside a template literal.
 *
 * @module
 */

/**
 * Raw shell text: the backslash in `$\{` is dropped, every other
 * character is kept as written.
 *
 * @example
 * ```ts
 * const code = sh`sap_len=$\{#1}`; // "sap_len=${#1}"
 * ```
 */
export function sh(strings: TemplateStringsArray, ...values: never[]): string {
  if (values.length !== 0 || strings.raw.length !== 1) {
    throw new TypeError("sh: shell text takes no interpolations; pass data as quoted arguments or on stdin");
  }
  return strings.raw[0]!.replaceAll("$\\{", "${");
}
