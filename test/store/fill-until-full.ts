// Child process for the full-disk tests: writes batches of rollouts into the store at argv[2] until
// the store refuses one, reporting each committed batch's ids (after insertRollouts returned) and
// then the refusal's message, on stdout. Run on a tiny file system, or under a file-size limit.
import { writeSync } from 'node:fs';
import { openStore } from '../../src/store/store.js';
import { layoutSetFixture } from './fixture-data.js';

const store = openStore(process.argv[2]);
const set = layoutSetFixture([1, 2, 3]);
store.putLayoutSet(set);
const policy = store.upsertPolicy({ spec: 'code:scripted', name: 'scripted' });
for (let i = 0; i < 100_000; i++) {
  try {
    const ids = store.insertRollouts(
      Array.from({ length: 10 }, (_, k) => ({
        kind: 'sim' as const,
        policyId: policy.id,
        layoutSetSha256: set.sha256,
        layoutIndex: k % 3,
        repeatIndex: i,
        episodeSeconds: 60,
        controlHz: 30,
        status: 'invalid' as const,
        outcome: 'rig-fault' as const,
        // Wordy reasons fill the disk in fewer batches.
        statusReason: `batch ${i}: ${'the simulation became unstable; '.repeat(20)}`,
      })),
    );
    writeSync(1, `committed ${ids.join(' ')}\n`);
  } catch (e) {
    writeSync(1, `refused ${(e as Error).name}: ${(e as Error).message}\n`);
    break;
  }
}
store.close();
