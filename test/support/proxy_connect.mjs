// A ProxyCommand for tests: `<runtime> proxy_connect.mjs LOG HOST PORT [WORDS…]` appends one JSON
// line {pid, argv} to LOG, connects to HOST:PORT over TCP (tests use 127.0.0.1 only) and pipes
// stdin → socket → stdout, as `nc HOST PORT` would. It exits when either side closes.
import { appendFileSync } from "node:fs";
import net from "node:net";

const [log, host, port, ...words] = process.argv.slice(2);
appendFileSync(log, JSON.stringify({ pid: process.pid, argv: [host, port, ...words] }) + "\n");
if (host !== "127.0.0.1") {
  process.stderr.write(`proxy_connect: refusing ${host}: tests only use 127.0.0.1\n`);
  process.exit(2);
}
const socket = net.connect(Number(port), host);
socket.on("error", (error) => {
  process.stderr.write(`proxy_connect: ${error.message}\n`);
  process.exit(1);
});
process.stdin.pipe(socket);
socket.pipe(process.stdout);
socket.on("close", () => process.exit(0));
process.stdin.on("end", () => socket.end());
