// Child process for the durability test: writes rollouts as fast as it can and reports each id
// on stdout only after insertRollouts has returned (i.e. committed), until it is killed.
import { writeSync } from 'node:fs';
import { openStore } from '../../src/store/store.js';
import { calibrationFixture, layoutSetFixture } from './fixture-data.js';

const store = openStore(process.argv[2]);
const set = layoutSetFixture([1, 2, 3]);
store.putLayoutSet(set);
const calA = calibrationFixture('projector-homography', 1, { h: [1, 0, 0, 0, 1, 0, 0, 0, 1] });
const calB = calibrationFixture('sim-parameters', 1, { friction: 0.6 });
store.putCalibration(calA);
store.putCalibration(calB);
const policy = store.upsertPolicy({ spec: 'code:scripted', name: 'scripted' });
writeSync(1, 'ready\n');
for (let i = 0; ; i++) {
  const ids = store.insertRollouts(
    [0, 1].map((k) => ({
      kind: 'sim' as const,
      policyId: policy.id,
      layoutSetSha256: set.sha256,
      layoutIndex: (i + k) % 3,
      seed: i,
      repeatIndex: k,
      episodeSeconds: 60,
      controlHz: 30,
      status: 'valid' as const,
      progress: 0.5,
      counts: { inBin: 1, target: 2 },
      calibrationSha256s: [calA.sha256, calB.sha256],
    })),
  );
  writeSync(1, `committed ${ids.join(' ')}\n`);
}
