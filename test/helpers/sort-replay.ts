/**
 * A sort-from-tote action sequence that scores: code:sort-from-tote's joint targets on a hand-built
 * one-bolt layout, recorded row by row from a sim rollout (the policy reads the privileged state,
 * which an env-server client cannot; replayed open loop, the same actions put the bolt in its slot
 * in most environments). Written as the Python reward check's --replay file: {layout, actions}.
 */
import { writeFileSync } from 'node:fs';
import { SortPolicy } from '../../src/policy/code/index.js';
import { runSimRollout } from '../../src/sim/sim-rollout.js';
import { SORT_FROM_TOTE } from '../../src/tasks/index.js';
import type { Layout } from '../../src/tasks/types.js';

export const ONE_BOLT_LAYOUT: Layout = {
  index: 0,
  tier: 1,
  fixtures: [
    { id: 'tote', kind: 'tote', pose: { x: -0.05, y: 0.32, yawRad: 0 } },
    { id: 'sorter', kind: 'sorter', pose: { x: -0.1, y: -0.105, yawRad: 0 } },
  ],
  objects: [
    { id: 'bolt-1', kind: 'bolt-m8x40', posture: 'lying', pose: { x: -0.05, y: 0.32, yawRad: 0.3 }, inFixture: 'tote' },
  ],
};

/** Episode length the replay covers, s (the bolt lies in its slot by ≈ 12 s). */
export const SORT_REPLAY_SECONDS = 14;

/** Records the replay and writes it to `path`; returns how the recorded rollout ended. */
export async function writeSortReplay(path: string): Promise<{ inCorrectSlot: number; rows: number }> {
  const policy = new SortPolicy();
  const rows: number[][] = [];
  const infer = policy.infer.bind(policy);
  policy.infer = async (obs) => {
    const chunk = await infer(obs);
    for (let r = 0; r < chunk.horizon; r++) rows.push(Array.from(chunk.actions.subarray(r * 14, r * 14 + 14)));
    return chunk;
  };
  const { episode } = await runSimRollout({
    task: SORT_FROM_TOTE,
    layout: ONE_BOLT_LAYOUT,
    policy,
    seed: 0,
    episodeSeconds: SORT_REPLAY_SECONDS,
    placementNoise: false,
  });
  writeFileSync(path, JSON.stringify({ layout: ONE_BOLT_LAYOUT, actions: rows }));
  return { inCorrectSlot: episode.progress?.counts.inCorrectSlot ?? 0, rows: rows.length };
}
