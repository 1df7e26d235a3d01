/**
 * A test file that fails after making this run's test users, for
 * test/system_users.test.ts (`bun test ./test/support/failing_users_fixture.ts`;
 * not named *.test.ts, so `npm test` does not collect it).
 */
import { expect, test } from "bun:test";
import { ensureTestUsers } from "./test_users.ts";

test("makes the users, then fails on purpose", () => {
  const users = ensureTestUsers();
  console.log(`made ${users.nopasswdUser}`);
  expect("this run").toBe("a failure on purpose");
});
