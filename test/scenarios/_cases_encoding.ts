/**
 * Scenarios 150–159: opt-in single-byte encodings (issue 29 item 6) —
 * `encoding: "latin1" | "windows-1252"`, every byte kept, characters the
 * encoding lacks refused.
 *
 * @module
 */
import { patch, type ScenarioCase, sha256Of } from "./_case.ts";

/** Bytes from text (code points 0–255 as bytes) and byte values. */
function bytes(...parts: (string | number[])[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));
}

const LATIN_CRLF = bytes("[kunde]\r\nname = M", [0xfc], "ller\r\nstadt = K", [0xf6], "ln\r\n");
const CP1252 = bytes("title = ", [0x93], "Caf", [0xe9], [0x94], "\nodd = ", [0x81, 0x8d, 0x8f, 0x90, 0x9d], "\nprice = 5 EUR\n");

/** The encoding scenarios. */
export const ENCODING_CASES: ScenarioCase[] = [
  {
    id: 150,
    name: "latin1_crlf_update",
    readme: "`encoding: \"latin1\"`: a CRLF latin-1 file is matched on its decoded text; untouched bytes are kept, the new line is written in latin-1 with CRLF (issue 29.6).",
    input: { "kunde.ini": LATIN_CRLF },
    patch: patch("*** Update File: kunde.ini", "@@ [kunde]", " name = Müller", "-stadt = Köln", "+stadt = Düsseldorf"),
    options: { encoding: "latin1", expectedSha256: { "kunde.ini": sha256Of(LATIN_CRLF) } },
    expected: { "kunde.ini": bytes("[kunde]\r\nname = M", [0xfc], "ller\r\nstadt = D", [0xfc], "sseldorf\r\n") },
  },
  {
    id: 151,
    name: "windows_1252_undefined_bytes_round_trip",
    readme: "`encoding: \"windows-1252\"`: € and curly quotes are written as their bytes; the five bytes the code page leaves undefined (0x81 0x8D 0x8F 0x90 0x9D) round-trip as U+0081… (WHATWG).",
    input: { "menu.txt": CP1252 },
    patch: patch("*** Update File: menu.txt", "@@", "-price = 5 EUR", "+price = 5 € “net”"),
    options: { encoding: "windows-1252" },
    expected: { "menu.txt": bytes("title = ", [0x93], "Caf", [0xe9], [0x94], "\nodd = ", [0x81, 0x8d, 0x8f, 0x90, 0x9d], "\nprice = 5 ", [0x80], " ", [0x93], "net", [0x94], "\n") },
  },
  {
    id: 152,
    name: "latin1_unencodable_character",
    readme: "A `+` line with a character latin-1 cannot represent fails `unencodable_character` with the path, the patch line and the character; nothing is applied (the other file of the patch neither).",
    input: { "kunde.ini": LATIN_CRLF, "plain.txt": bytes("a\n") },
    patch: patch("*** Update File: plain.txt", "@@", "-a", "+b", "*** Update File: kunde.ini", "@@", "-stadt = Köln", "+stadt = Köln €"),
    options: { encoding: "latin1" },
    failure: [{ code: "unencodable_character", path: "kunde.ini", patchLine: 9, unencodable: { character: "€", codePoint: 0x20ac, encoding: "latin1", column: 14 } }],
  },
  {
    id: 153,
    name: "non_utf8_names_the_encoding_option",
    readme: "Without `encoding`, a latin-1 file still fails `invalid_utf8` (the default stays strict UTF-8), and the failure names the option.",
    input: { "kunde.ini": LATIN_CRLF },
    patch: patch("*** Update File: kunde.ini", "@@", "-stadt = Köln", "+stadt = Bonn"),
    failure: [{ code: "invalid_utf8", path: "kunde.ini", line: 2, messageIncludes: ['encoding: "latin1"'] }],
  },
  {
    id: 154,
    name: "latin1_add_and_replace",
    readme: "Under `encoding`, an Add and a whole-file replace are written in that encoding too (one encoding per request).",
    input: { "kunde.ini": LATIN_CRLF },
    patch: patch("*** Add File: neu.txt", "+Grüße", "*** Replace File: kunde.ini", "+[kunde]", "+name = Jürgen"),
    options: { encoding: "latin1" },
    expected: { "kunde.ini": bytes("[kunde]\r\nname = J", [0xfc], "rgen\r\n"), "neu.txt": bytes("Gr", [0xfc, 0xdf], "e\n") },
  },
];
