/**
 * Another process on the service's database: opens the same libSQL file,
 * takes the write lock with `BEGIN EXCLUSIVE`, says "locked" on stdout and
 * holds the lock until its stdin closes, then rolls back and says "released".
 * Usage: deno run -A tests/faults/hold_write_lock.ts <path to the .db file>
 */
import Libsql from "libsql";

const db = new Libsql(Deno.args[0]);
db.exec("PRAGMA busy_timeout = 5000");
db.exec("BEGIN EXCLUSIVE");
const say = (line: string) => Deno.stdout.write(new TextEncoder().encode(line + "\n"));
await say("locked");
// Holds until the test closes our stdin (or dies: the OS closes it then too).
for await (const _ of Deno.stdin.readable) {
  // what the test writes is irrelevant; only the end matters
}
db.exec("ROLLBACK");
db.close();
await say("released");
