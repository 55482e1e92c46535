// Child process for the concurrent-open test: once loaded it says "ready", waits for "go" on
// stdin, then opens (creating) the store and reports its schema version.
import { openStore } from '../../src/store/store.js';

process.stdout.write('ready\n');
process.stdin.setEncoding('utf8').once('data', () => {
  try {
    const store = openStore(process.argv[2]);
    process.stdout.write(`version ${store.schemaVersion}\n`);
    store.close();
  } catch (e) {
    process.stdout.write(`failed ${(e as Error).message}\n`);
  }
  process.exit(0);
});
