// Child process for the read-only test (run as another user): opens the store at argv[2] and
// adds a policy, then prints "wrote" or "refused <message>".
import { openStore } from '../../src/store/store.js';

try {
  const store = openStore(process.argv[2]);
  store.upsertPolicy({ spec: 'code:other', name: 'other' });
  store.close();
  process.stdout.write('wrote\n');
} catch (e) {
  process.stdout.write(`refused ${(e as Error).message}\n`);
}
