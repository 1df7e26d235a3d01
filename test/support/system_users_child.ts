/**
 * A child process for test/system_users.test.ts: creates this run's test
 * users (SAP_TEST_RUN_ID from the parent), reports what it made on one stdout
 * line, then ends as the first argument says — `exit` (normally), `throw` (an
 * uncaught error), `wait` (until the parent signals it).
 */
import { ensureTestUsers } from "./test_users.ts";

const users = ensureTestUsers();
process.stdout.write(`${JSON.stringify({ ...users, password: undefined })}\n`);
const mode = process.argv[2];
if (mode === "throw") throw new Error("the child fails after making its users");
if (mode === "wait") setInterval(() => {}, 1000);
