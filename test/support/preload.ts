/**
 * Loaded by `bun test` before any test file (bunfig.toml): a global
 * `afterAll` that removes this run's test users and sudoers rules after the
 * last file, whether tests passed or failed (test/support/test_users.ts; Bun's
 * test runner does not emit the process `exit` event, so the exit hook there
 * is not enough).
 */
import { afterAll } from "bun:test";
import { removeTestUsers } from "./test_users.ts";

afterAll(removeTestUsers);
