/**
 * `tandem rig rollout`: one rollout of a policy on the configured rig (default the embedded
 * `yam-emulated`), through the same policy registry and rollout loop as `tandem sim rollout`,
 * on wall time. The real rig has no privileged end state: the episode is left for the operator
 * to score. The work lives in src/rollout/rig-rollout.ts; this file reads files, brings the rig
 * up and turns bad input into one sentence.
 */
import { resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand } from '../command.js';
import { episodeSummary, openPolicyForCli, rolloutLayoutArgs } from './sim.js';
import { RigError, type Rig } from '../../rig/contract.js';
import { RealtimeClock } from '../../rig/clocks.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { PrivilegedStateRequiredError } from '../../policy/code/privileged.js';
import { knownPolicySpecs } from '../../rollout/policy-registry.js';
import type { CameraSource } from '../../rollout/run-episode.js';
import type { CameraName, RgbImage } from '../../policy/contract.js';
import { blackImage } from '../../policy/image.js';
import { assertRunsOnRig, runRigRollout, type RigRolloutResult } from '../../rollout/rig-rollout.js';
import { DEFAULT_SIM_CONTROL_HZ } from '../../sim/sim-rollout.js';
import { readRigConfig } from '../station.js';
import { DEFAULT_RIG_CONFIG, stationRigRegistry } from '../rig-registry.js';

/** Exit code when the policy (server) timed out or went away mid-episode, as `tandem policy probe` uses. */
const EXIT_POLICY_UNAVAILABLE = 3;
const EXIT_INTERRUPTED = 130;
/** Below the safety supervisor's 2 s watchdog damp: a stalled policy aborts while the arm still holds. */
const DEFAULT_DEADLINE_MS = 1500;

function percentile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Black 224×224 frames (openpi's image size) for every camera asked: rehearses the image path's cost, not what a camera sees. */
function blankCameras(): CameraSource {
  const frame = blackImage(224, 224);
  return {
    capture: (names: readonly CameraName[]) => {
      const out: Partial<Record<CameraName, RgbImage>> = {};
      for (const n of names) out[n] = frame;
      return Promise.resolve(out);
    },
  };
}

const round = (x: number, digits = 2): number => Number(x.toFixed(digits));

function report(r: RigRolloutResult, rigType: string, rateHz: number): Record<string, unknown> {
  const e = r.episode;
  const latency = r.chunks.map((c) => c.latencyMs).sort((a, b) => a - b);
  const waited = r.chunks.map((c) => c.waitedMs).sort((a, b) => a - b);
  return {
    ...episodeSummary(e),
    // No privileged end state on the rig: the operator scores the outcome.
    progress: null,
    scoring: e.status === 'valid' ? 'awaiting operator score' : 'not scored',
    rig: rigType,
    finalMode: r.finalMode,
    rateHz,
    achievedHz: round(r.timing.achievedHz, 1),
    wakeLateP50Ms: round(r.timing.wakeLateP50Ms),
    wakeLateP99Ms: round(r.timing.wakeLateP99Ms),
    wakeLateMaxMs: round(r.timing.wakeLateMaxMs),
    lateSteps: r.timing.lateSteps,
    horizon: r.chunks[0]?.horizon ?? null,
    inferenceMs: { p50: round(percentile(latency, 0.5)), max: round(latency[latency.length - 1] ?? 0) },
    waitedMs: { p50: round(percentile(waited, 0.5)), max: round(waited[waited.length - 1] ?? 0) },
    safetyEventsByKind: r.safetyEventsByKind,
    wallSeconds: round(r.wallMs / 1000, 3),
  };
}

const rollout: CliCommand = {
  path: ['rig', 'rollout'],
  summary: 'run one rollout of a policy on the rig (default the embedded emulated YAM); left for the operator to score',
  help: `Usage: tandem rig rollout --policy SPEC --layouts FILE --layout I [--seconds S] [--rig-config FILE] [--rate HZ] [--timeout-ms N] [--seed K] [--blank-cameras] [--json]

Brings the configured rig up, runs the policy through the same rollout loop and policy specs as
'tandem sim rollout' on the wall clock, then holds, damps and closes the rig. The real rig has no
privileged end state, so the rollout is not scored here: it awaits the operator's score.
Code policies (code:…) read object poses only the sim has and are refused.

  --policy SPEC       ${knownPolicySpecs().filter((s) => !s.startsWith('code:')).join(' | ')}
  --layouts FILE      layout set written by 'tandem layouts sample' (the operator places layout I)
  --layout I          layout index (0-based)
  --seconds S         episode length (default: the task's, the same as in the sim)
  --rig-config FILE   rig config JSON (default ${JSON.stringify(DEFAULT_RIG_CONFIG)}: no hardware)
  --rate HZ           control rate (default ${DEFAULT_SIM_CONTROL_HZ}, the sim's)
  --timeout-ms N      per-inference deadline; past it the rig holds and the rollout is aborted (default ${DEFAULT_DEADLINE_MS})
  --seed K            the policy's seed (default 0)
  --blank-cameras     feed black 224×224 frames to a policy that reads cameras (no rig camera driver
                      in this build): rehearses a policy server's connection and timing, not its behaviour
  --json              print {"status", "steps", "chunks", "achievedHz", "inferenceMs", "safetyEventsByKind", …}

Prints steps, achieved control rate, chunk and inference timing, safety interventions and status.
Exit codes: 0 ran its length, 1 invalid (rig fault) or the policy failed (bad actions), 2 bad input, 3 policy timeout or disconnect,
130 stopped with Ctrl-C (the rig holds and damps first).`,
  options: {
    policy: { type: 'string' },
    layouts: { type: 'string' },
    layout: { type: 'string' },
    seconds: { type: 'string' },
    'rig-config': { type: 'string' },
    rate: { type: 'string' },
    'timeout-ms': { type: 'string' },
    seed: { type: 'string' },
    'blank-cameras': { type: 'boolean' },
  },
  async run(args, io) {
    const { set, layout, task, seconds } = rolloutLayoutArgs(args, io);
    const rateHz = numberOption(args, 'rate', DEFAULT_SIM_CONTROL_HZ, 1, MAX_CONTROL_RATE_HZ);
    const deadlineMs = intOption(args, 'timeout-ms', DEFAULT_DEADLINE_MS, 1, 600_000);
    const seed = intOption(args, 'seed', 0, 0, 2 ** 31 - 1);
    const configFile = typeof args.values['rig-config'] === 'string' ? resolve(io.cwd, args.values['rig-config']) : undefined;
    const rigConfig = await readRigConfig(configFile);
    const rigType = (rigConfig as { type?: unknown }).type;

    const spec = requireString(args, 'policy');
    const policy = await openPolicyForCli(spec, io);
    try {
      try {
        assertRunsOnRig(policy);
      } catch (e) {
        if (e instanceof PrivilegedStateRequiredError) throw new UserError(e.message);
        throw e;
      }
      const blank = args.values['blank-cameras'] === true;
      if (policy.info.cameras.length > 0 && !blank) {
        throw new UserError(
          `Policy ${policy.info.name} reads cameras (${policy.info.cameras.join(', ')}), and this build has no rig camera driver; run it in the sim with 'tandem sim rollout', or rehearse with --blank-cameras (black frames).`,
        );
      }
      const cameras: CameraSource | undefined = blank ? blankCameras() : undefined;
      const clock = new RealtimeClock();
      let rig: Rig;
      try {
        rig = await stationRigRegistry().create(rigConfig, { clock, signal: io.signal });
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message);
        throw e;
      }
      let result: RigRolloutResult;
      io.err(`Running ${policy.info.name} on ${String(rigType)} for ${seconds} s; Ctrl-C stops it (the rig holds, then damps).\n`);
      try {
        result = await runRigRollout({ rig, policy, cameras, task, layout, episodeSeconds: seconds, controlHz: rateHz, seed, deadlineMs, signal: io.signal, clock });
      } catch (e) {
        if (e instanceof RigError) throw new UserError(`The rig (${String(rigType)}) failed during the rollout: ${e.message}`, 1);
        throw e;
      } finally {
        await rig.close?.();
      }
      const e = result.episode;
      const out = report(result, String(rigType), rateHz);
      if (args.values.json) {
        io.out(`${JSON.stringify({ ...out, layoutSet: set.sha256 })}\n`);
      } else {
        const status = e.status === 'valid' ? 'valid, awaiting operator score' : `${e.status}: ${e.reason ?? ''}`;
        const kinds = Object.entries(result.safetyEventsByKind).map(([k, n]) => `${k} ${n}`);
        io.out(
          `layout ${e.layoutIndex} (tier ${e.tier}), ${policy.info.name} on ${String(rigType)}, ${seconds} s: ${status}\n` +
            (e.error ? `policy error: ${e.error}\n` : '') +
            `steps ${e.trajectory.steps} at ${out.achievedHz} Hz achieved (asked ${rateHz} Hz; wake late p50 ${out.wakeLateP50Ms} ms, p99 ${out.wakeLateP99Ms} ms, ${result.timing.lateSteps} late steps)\n` +
            `chunks ${String(out.chunks)} of ${String(out.horizon ?? '?')} rows; inference p50 ${(out.inferenceMs as { p50: number }).p50} ms, max ${(out.inferenceMs as { max: number }).max} ms; loop waited max ${(out.waitedMs as { max: number }).max} ms\n` +
            `safety events ${e.safetyEvents.length}${kinds.length ? ` (${kinds.join(', ')})` : ''}; rig ${result.finalMode} after the rollout\n`,
        );
      }
      if (e.status === 'valid') return e.error ? 1 : 0;
      if (io.signal.aborted && e.reason === 'stopped by the operator') return EXIT_INTERRUPTED;
      if (e.status === 'aborted') return EXIT_POLICY_UNAVAILABLE;
      return 1;
    } finally {
      await policy.close?.();
    }
  },
};

export const commands: CliCommand[] = [rollout];
