// Another local user against the example MCP server over HTTP (issue 26's
// done-when). Plain JavaScript with node: APIs only; http_auth.test.ts runs
// it as a second uid (setpriv). It reads one JSON object on stdin:
//   { url, tokenFile, socket, leakedToken, canaryPath, targetPath, outsideSecret }
// and prints one JSON array on stdout: what each attempt got back (status
// and the first 4000 characters of the body, or the error code).
// `leakedToken` is the server's real token, given to the attempts that
// prove a token in the URL is refused and that, even with the token, a
// client-declared root of / adds nothing.
import { readFileSync } from "node:fs";
import { request } from "node:http";

const input = JSON.parse(readFileSync(0, "utf8"));
const url = new URL(input.url);
const results = [];

const JSON_SSE = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const init = (capabilities = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities, clientInfo: { name: "attacker", version: "1" } } });
const call = (id, name, args) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });
const addPwned = (path) => `*** Begin Patch\n*** Add File: ${path}\n+pwned\n*** End Patch`;

function send(path, body, headers = {}, where = { host: "127.0.0.1", port: Number(url.port) }) {
  return new Promise((resolve) => {
    const req = request({ ...where, path, method: "POST", headers: { ...JSON_SSE, "content-length": Buffer.byteLength(body), ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode, session: res.headers["mcp-session-id"] ?? null, challenge: res.headers["www-authenticate"] ?? null, body: text.slice(0, 4000) }));
    });
    req.on("error", (error) => resolve({ error: error.code ?? error.message }));
    req.end(body);
  });
}

async function attempt(name, fn) {
  try {
    results.push({ name, ...(await fn()) });
  } catch (error) {
    results.push({ name, error: String(error) });
  }
}

const wrong = { authorization: "Bearer guessed-0123456789abcdefghijklmnopqrstuvwxyzABCDEF" };
await attempt("no token: initialize", () => send("/mcp", init()));
await attempt("no token: read the canary", () => send("/mcp", call(2, "read_file", { path: input.canaryPath }), { "mcp-session-id": "guessed" }));
await attempt("no token: add a file", () => send("/mcp", call(3, "apply_patch", { patch: addPwned(input.targetPath) }), { "mcp-session-id": "guessed" }));
await attempt("wrong token: initialize", () => send("/mcp", init(), wrong));
await attempt("wrong token: read the canary", () => send("/mcp", call(2, "read_file", { path: input.canaryPath }), { ...wrong, "mcp-session-id": "guessed" }));
await attempt("another scheme", () => send("/mcp", init(), { authorization: `Basic ${Buffer.from(`x:${input.leakedToken}`).toString("base64")}` }));
await attempt("token in the URL (access_token)", () => send(`/mcp?access_token=${encodeURIComponent(input.leakedToken)}`, init()));
await attempt("token in the URL (token)", () => send(`/mcp?token=${encodeURIComponent(input.leakedToken)}`, call(2, "read_file", { path: input.canaryPath })));
await attempt("read the token file", () => {
  try {
    return { body: readFileSync(input.tokenFile, "utf8") };
  } catch (error) {
    return { error: error.code };
  }
});
await attempt("the Unix socket", () => send("/mcp", init(), {}, { socketPath: input.socket }));

// With the token (leaked): declare a client root of / and try to reach outside the configured root.
const auth = { authorization: `Bearer ${input.leakedToken}` };
const opened = await send("/mcp", init({ roots: { listChanged: true } }), auth);
results.push({ name: "with the token, roots capability: initialize", status: opened.status });
if (opened.session) {
  const s = { ...auth, "mcp-session-id": opened.session };
  await send("/mcp", JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), s);
  await send("/mcp", JSON.stringify({ jsonrpc: "2.0", method: "notifications/roots/list_changed" }), s);
  await attempt("client root /: read the outside secret by root name", () => send("/mcp", call(4, "read_file", { root: "root", path: input.outsideSecret.slice(1) }), s));
  await attempt("client root /: read /etc/shadow", () => send("/mcp", call(5, "read_file", { path: "/etc/shadow" }), s));
  await attempt("client root /: read the outside secret by ..", () => send("/mcp", call(6, "read_file", { path: `../outside/${input.outsideSecret.split("/").pop()}` }), s));
  await attempt("client root /: add authorized_keys in /", () => send("/mcp", call(7, "apply_patch", { root: "root", patch: addPwned("root/.ssh/authorized_keys") }), s));
  await attempt("client root /: list /", () => send("/mcp", call(8, "list_files", { root: "root" }), s));
}
process.stdout.write(JSON.stringify(results));
