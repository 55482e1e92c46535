/**
 * Warm-up for a code policy's worker thread (ThreadedPolicyOptions.warmUp): a short sim episode
 * of a throwaway instance on a fixed layout of the policy's own task, so V8 has optimised the
 * planner before the real instance plans. Cold, the first plans of `code:bottles-in-the-bin` take
 * 105–200 ms on the emulated cell of a busy 2-core machine — past the safety supervisor's 100 ms
 * watchdog, so every cell rollout held at its start; warm, they take a third to a half of that.
 * Costs ≈1–2 s of the worker's time before the policy is ready. Nothing of it reaches the real
 * instance: only latency changes, never an answer.
 */
import { sampleLayoutSet } from '../layouts/layout-set.js';
import type { Policy } from '../policy/contract.js';
import { parseCodePolicySpec } from '../policy/code/index.js';
import { getTask, isTaskId } from '../tasks/registry.js';
import { runSimRollout } from './sim-rollout.js';

/** This module, for ThreadedPolicyOptions.warmUp. */
export const POLICY_WARM_UP = new URL(import.meta.url);

/** Episode time of the warm-up: the first grasp and carry of a tier-1 layout, the planner's every phase. */
export const WARM_UP_SECONDS = 10;

export async function warmUpPolicy(spec: string, open: () => Promise<Policy>): Promise<void> {
  // A code policy is named after its task (code:bottles-in-the-bin?skill=0.3 → bottles-in-the-bin).
  const taskId = parseCodePolicySpec(spec)?.name;
  if (taskId === undefined || !isTaskId(taskId)) return;
  const task = getTask(taskId);
  const layout = sampleLayoutSet({ task: task.id, tiers: [1], perTier: 1, seed: 1 }).layouts[0];
  const policy = await open();
  try {
    await runSimRollout({ task, layout, policy, seed: 0, episodeSeconds: WARM_UP_SECONDS });
  } finally {
    await policy.close?.();
  }
}
