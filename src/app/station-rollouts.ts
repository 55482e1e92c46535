/** The Rollouts page's runner: one rollout on the station's rig through `tandem rig rollout`'s own code, stored and scored. */
import { EPISODE_CONTROL_HZ } from '../rollout/run-episode.js';
import type { Clock } from '../rig/contract.js';
import { RigError } from '../rig/contract.js';
import { layoutAt } from '../layouts/layout-set.js';
import { LayoutSetError } from '../layouts/errors.js';
import { getTask } from '../tasks/registry.js';
import type { Store } from '../store/store.js';
import type { RunRolloutRequest } from '../server/api-types.js';
import { RigHost } from '../server/rig-host.js';
import { ApiRefusal } from '../server/request-checks.js';
import type { PreparedRollout, RolloutRunner } from '../server/single-rollouts.js';
import { SCRIPTED_OPERATOR } from './session-operators.js';
import { UserError } from './command.js';
import type { RigServices } from './services/rig-services.js';
import type { StationConfig } from './station-config.js';
import { openRigPolicy, rolloutOnRig } from './rollout-on-rig.js';
import { storeRolloutOnRig } from './store-rig-rollout.js';

/** Counts the loop's waits: runEpisode waits once per control step, so this is its progress. */
class StepCountingClock implements Clock {
  readonly passesWhileAwaiting: boolean | undefined;
  private waits = 0;
  constructor(
    private readonly inner: Clock,
    private readonly onSteps: (steps: number) => void,
  ) {
    this.passesWhileAwaiting = inner.passesWhileAwaiting;
  }
  nowS(): number {
    return this.inner.nowS();
  }
  async waitUntil(tS: number): Promise<void> {
    await this.inner.waitUntil(tS);
    this.waits += 1;
    this.onSteps(this.waits);
  }
}

export function rolloutRunner(
  store: Store,
  host: RigHost<RigServices>,
  station: StationConfig,
  cwd: string,
  episodesDir: string,
): RolloutRunner {
  return {
    async prepare(req: RunRolloutRequest): Promise<PreparedRollout> {
      const set = store.loadLayoutSet(req.layoutSet);
      if (!set)
        throw new ApiRefusal(
          400,
          `There is no layout set ${req.layoutSet.slice(0, 12)}… in the store; sample one on the Rollouts page or run one of its rollouts with 'tandem rig rollout'.`,
        );
      let layout;
      try {
        layout = layoutAt(set, req.layout);
      } catch (e) {
        if (e instanceof LayoutSetError) throw new ApiRefusal(400, e.message);
        throw e;
      }
      const task = getTask(set.task);
      const seconds = req.seconds ?? task.episodeSeconds;
      const seed = req.seed ?? 0;
      let policy;
      try {
        policy = await openRigPolicy(req.policy, { cwd });
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
      const rateHz = EPISODE_CONTROL_HZ;
      return {
        policy: req.policy,
        layoutSet: set.sha256,
        layout: req.layout,
        seconds,
        totalSteps: Math.round(seconds * rateHz),
        async run(onSteps, onPhase) {
          try {
            const run = await host.forRollout({ task, layout, placementSeed: seed }, (rig, clock, signal, services) => {
              onPhase(`The rig is up with layout ${req.layout} on its table; starting ${policy.info.name}.`);
              // Scored from the table where the rig's services can (the emulated cell), unless the request says otherwise.
              const scoreFromCell = req.scoreFromCell ?? services.endStateScorer.available;
              return rolloutOnRig({
                rig,
                services,
                rigType: host.type,
                station,
                policy,
                task,
                layout,
                seconds,
                rateHz,
                seed,
                scoreFromCell,
                blankCameras: false,
                signal,
                clock: new StepCountingClock(clock, onSteps),
                log: () => {},
                record: { store, dir: episodesDir, spec: req.policy, set },
              });
            });
            const e = run.result.episode;
            host.keepEvents(e.safetyEvents);
            const { rolloutId } = await storeRolloutOnRig(store, { spec: req.policy, policy: policy.info, set }, run);
            const score = e.status === 'valid' ? run.score : undefined;
            const what =
              e.status !== 'valid'
                ? `is ${e.status}: ${e.reason ?? ''}`
                : score
                  ? `scored ${score.progress.toFixed(2)} by the ${SCRIPTED_OPERATOR}: ${score.summary}`
                  : 'is valid and awaits an operator score.';
            return {
              rolloutId,
              status: e.status,
              progress: score?.progress ?? null,
              scoreSummary: score?.summary ?? null,
              message: `Rollout ${rolloutId} ${what}${e.error ? ` Policy error: ${e.error}` : ''}`,
            };
          } catch (e) {
            if (e instanceof RigError)
              throw new UserError(`The rig (${host.type}) failed during the rollout: ${e.message}`, 1);
            throw e;
          } finally {
            await policy.close?.();
          }
        },
      };
    },
  };
}
