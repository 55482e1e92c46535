// Child process for the concurrent-open test: once loaded it says "ready", waits for "go" on
// stdin, then opens (creating) the store and reports its schema version. It says "waiting" (written
// synchronously: opening blocks this thread) when it has to wait for another process's lock.
import { writeSync } from 'node:fs';
import { openStore } from '../../src/store/store.js';

process.stdout.write('ready\n');
process.stdin.setEncoding('utf8').once('data', () => {
  try {
    const store = openStore(process.argv[2], { onWaitForLock: () => writeSync(1, 'waiting\n') });
    process.stdout.write(`version ${store.schemaVersion}\n`);
    store.close();
  } catch (e) {
    process.stdout.write(`failed ${(e as Error).message}\n`);
  }
  process.exit(0);
});
