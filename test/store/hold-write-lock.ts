// Child process for the busy-store tests: another writer. Takes the store's write lock (BEGIN
// IMMEDIATE) and inserts a session in that transaction, says "locked", then commits either when
// told "release" on stdin or, with argv[3] = N, by itself N ms later; says "released" after.
import { writeSync } from 'node:fs';
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]);
db.exec('BEGIN IMMEDIATE');
db.prepare(
  "INSERT INTO sessions (kind, started_at, notes) VALUES ('real-eval', '2026-12-01T00:00:00.000Z', 'written by the other process')",
).run();
writeSync(1, 'locked\n');
const release = (): void => {
  db.exec('COMMIT');
  db.close();
  writeSync(1, 'released\n');
  process.exit(0);
};
if (process.argv[3] !== undefined) setTimeout(release, Number(process.argv[3]));
else process.stdin.setEncoding('utf8').on('data', (d: string) => d.includes('release') && release());
