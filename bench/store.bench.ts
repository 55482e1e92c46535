/**
 * What the store's durability costs, against baselines measured in the same run:
 *  - one committed transaction per rollout (what a session does: each write on disk before it
 *    returns, synchronous=FULL) against one transaction per batch of 100 (what a sweep can do);
 *  - opening a store holding many rollouts (quick integrity check included) against opening an
 *    empty one.
 * Usage: npm run bench -- store
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { openStore, type RolloutInput } from '../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-store-'));
try {
  const layouts = Array.from({ length: 50 }, (_, index) => ({
    index,
    tier: 1 + (index % 5),
    fixtures: [],
    objects: [],
  }));
  const canonicalJson = JSON.stringify({
    format: 'tandem.layout-set/1',
    layouts,
    seed: 1,
    task: 'bottles-in-the-bin',
    tiers: [1, 2, 3, 4, 5],
    version: 1,
  });
  const sha256 = createHash('sha256').update(canonicalJson).digest('hex');

  const prepare = (name: string) => {
    const store = openStore(join(dir, name));
    store.putLayoutSet({ sha256, canonicalJson });
    const policy = store.upsertPolicy({ spec: 'code:bench', name: 'bench' });
    const rollout = (i: number): RolloutInput => ({
      kind: 'sim',
      policyId: policy.id,
      layoutSetSha256: sha256,
      layoutIndex: i % 50,
      seed: i,
      repeatIndex: Math.floor(i / 50),
      episodeSeconds: 60,
      controlHz: 30,
      status: 'valid',
      progress: (i % 7) / 6,
      counts: { inBin: i % 7, target: 6 },
    });
    return { store, rollout };
  };

  const n = 2000;
  const batched = prepare('batched.sqlite');
  let t0 = performance.now();
  for (let i = 0; i < n; i += 100)
    batched.store.insertRollouts(Array.from({ length: 100 }, (_, k) => batched.rollout(i + k)));
  const batchedMs = performance.now() - t0;
  batched.store.close();

  const single = prepare('single.sqlite');
  t0 = performance.now();
  for (let i = 0; i < n; i++) single.store.insertRollout(single.rollout(i));
  const singleMs = performance.now() - t0;
  single.store.close();

  console.log(
    `insert ${n} rollouts, batches of 100 (baseline): ${batchedMs.toFixed(0)} ms  (${((1000 * batchedMs) / n).toFixed(1)} µs per rollout)`,
  );
  console.log(
    `insert ${n} rollouts, one commit each:        ${singleMs.toFixed(0)} ms  (${(singleMs / n).toFixed(2)} ms per rollout)  ratio ${(singleMs / batchedMs).toFixed(1)}×`,
  );

  const big = prepare('big.sqlite');
  const many = 100_000;
  for (let i = 0; i < many; i += 1000)
    big.store.insertRollouts(Array.from({ length: 1000 }, (_, k) => big.rollout(i + k)));
  big.store.close();
  openStore(join(dir, 'empty.sqlite')).close();
  const timeOpen = (file: string): number => {
    const reps = 5;
    const start = performance.now();
    for (let r = 0; r < reps; r++) openStore(join(dir, file)).close();
    return (performance.now() - start) / reps;
  };
  const emptyMs = timeOpen('empty.sqlite');
  const bigMs = timeOpen('big.sqlite');
  console.log(`open an empty store (baseline):              ${emptyMs.toFixed(1)} ms`);
  console.log(
    `open a store with ${many} rollouts:           ${bigMs.toFixed(1)} ms  ratio ${(bigMs / emptyMs).toFixed(1)}×`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
