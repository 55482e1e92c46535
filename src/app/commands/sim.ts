/**
 * `tandem sim …`: run sim rollouts of a policy on hash-pinned layouts — one (`sim rollout`) or
 * every layout R times on worker threads (`sim sweep`). The work lives in src/sim and
 * src/rollout; this file reads files, opens the store and turns bad input into one sentence.
 */
import { intOption, numberOption, requireString, UserError, type CliCommand, type CliIo } from '../command.js';
import { readLayoutSetFile } from './layouts.js';
import { layoutAt } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import { getTask } from '../../tasks/registry.js';
import type { Policy } from '../../policy/contract.js';
import { PolicyUnavailableError } from '../../policy/contract.js';
import { PolicyLoadError } from '../../policy/errors.js';
import { knownPolicySpecs, openPolicy, PolicySpecError } from '../../rollout/policy-registry.js';
import type { Episode } from '../../rollout/episode.js';
import { runSimRollout } from '../../sim/sim-rollout.js';

/** Opens a policy spec, or a UserError with one sentence. */
export async function openPolicyForCli(spec: string, io: CliIo): Promise<Policy> {
  try {
    return await openPolicy(spec, { cwd: io.cwd });
  } catch (e) {
    if (e instanceof PolicySpecError || e instanceof PolicyLoadError || e instanceof PolicyUnavailableError) throw new UserError(e.message);
    throw e;
  }
}

/** The JSON line a rollout prints. */
export function episodeSummary(e: Episode): Record<string, unknown> {
  return {
    status: e.status,
    valid: e.status === 'valid',
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.error ? { error: e.error } : {}),
    progress: e.progress?.progress ?? null,
    counts: e.progress?.counts ?? {},
    summary: e.progress?.summary ?? null,
    task: e.taskId,
    layout: e.layoutIndex,
    tier: e.tier,
    seed: e.seed,
    policy: e.policyName,
    seconds: e.episodeSeconds,
    steps: e.trajectory.steps,
    safetyEvents: e.safetyEvents.length,
    finalStateHash: e.finalStateHash,
  };
}

const rollout: CliCommand = {
  path: ['sim', 'rollout'],
  summary: 'run one sim rollout of a policy on one layout and score it',
  help: `Usage: tandem sim rollout --layouts FILE --layout I --policy SPEC [--seconds S] [--seed K] [--json]

Builds layout I of the (hash-verified) layout set in the Rapier sim, runs the policy through the
same rollout loop the real rig uses, and scores task progress from the sim's end state.

  --layouts FILE   layout set written by 'tandem layouts sample'
  --layout I       layout index (0-based)
  --policy SPEC    ${knownPolicySpecs().join(' | ')}
  --seconds S      episode length (default: the task's, the same as on the real rig)
  --seed K         rollout seed: placement noise and the policy's seed (default 0)
  --json           print {"progress", "counts", "valid", "status", "finalStateHash", …}

Same layout, policy and seed → the same trajectory and finalStateHash, in any process.`,
  options: { layouts: { type: 'string' }, layout: { type: 'string' }, policy: { type: 'string' }, seconds: { type: 'string' }, seed: { type: 'string' } },
  async run(args, io) {
    const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const index = intOption(args, 'layout', undefined, 0, 1_000_000);
    let layout;
    try {
      layout = layoutAt(set, index);
    } catch (e) {
      if (e instanceof LayoutSetError) throw new UserError(e.message);
      throw e;
    }
    const task = getTask(set.task);
    const seconds = numberOption(args, 'seconds', task.episodeSeconds, 0.02, 3600);
    const seed = intOption(args, 'seed', 0, 0, 2 ** 31 - 1);
    const policy = await openPolicyForCli(requireString(args, 'policy'), io);
    try {
      const result = await runSimRollout({ task, layout, policy, seed, episodeSeconds: seconds, signal: io.signal });
      const e = result.episode;
      if (args.values.json) {
        io.out(`${JSON.stringify({ ...episodeSummary(e), layoutSet: set.sha256, simCalibration: result.calibrationSha256, wallSeconds: result.wallMs / 1000 })}\n`);
      } else {
        const head = e.status === 'valid' ? (e.progress?.summary ?? 'not scored') : `${e.status}: ${e.reason ?? e.error ?? ''}`;
        io.out(`layout ${e.layoutIndex} (tier ${e.tier}), ${policy.info.name}, seed ${seed}, ${seconds} s: ${head}\n`);
        if (e.error) io.out(`policy error: ${e.error}\n`);
        io.out(`safety events ${e.safetyEvents.length}, real-time factor ${((seconds * 1000) / result.wallMs).toFixed(1)}×\nfinalStateHash ${e.finalStateHash}\n`);
      }
      return e.status === 'valid' ? 0 : 1;
    } finally {
      await policy.close?.();
    }
  },
};

export const commands: CliCommand[] = [rollout];
