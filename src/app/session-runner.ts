/**
 * The session engine's rollout on the rig: the rig from its config with the slot's layout on its
 * table, the same rolloutOnRig / storeRolloutOnRig path as `tandem rig rollout` (recorded, stored,
 * linked to the session), and the policies opened once for the whole session. The operator's
 * score is the engine's to journal, so the stored rollout carries none of its own here.
 */
import type { CellIo } from './cell-io.js';
import { RigError, type Clock, type Rig } from '../rig/contract.js';
import type { RigContext } from '../rig/registry.js';
import type { Policy } from '../policy/contract.js';
import type { OperatorTakeover } from '../rollout/operator-takeover.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { Store } from '../store/store.js';
import type { SessionRolloutRunner, SessionRunOutcome, SessionRunRequest } from '../session/ports.js';
import { rigTypeWords } from '../server/api-types.js';
import { UserError, type CliIo } from './command.js';
import { clockForRigConfig } from './rig-registry.js';
import { createStationRig } from './station-rig.js';
import type { RigServices } from './services/rig-services.js';
import type { StationConfig } from './station-config.js';
import { openRigPolicy, rolloutOnRig, type RolloutOnRig } from './rollout-on-rig.js';
import { storeRolloutOnRig } from './store-rig-rollout.js';
import type { SessionTakeover } from './session-takeover.js';

export interface RigSessionRunnerOptions {
  /** The station config: its rig (gripper calibrations applied) and the cameras every rollout opens and records. */
  readonly station: StationConfig;
  readonly store: Store;
  readonly episodesDir: string;
  readonly set: LayoutSet;
  readonly rateHz: number;
  /** Default: the rollout's clock decides (policyDeadlineMs). */
  readonly deadlineMs?: number;
  /** The emulated cell's scripted operator looks at the table after each episode. */
  readonly lookAtTable: boolean;
  readonly blankCameras: boolean;
  /** A blind session: what comes back to the engine (and the operator) names the label, never the policy. */
  readonly blind: boolean;
  /** The cell PLC's interlocks and the station state the tower light shows (--cell-io), if configured. */
  readonly cellIo?: CellIo;
  /** What is really on the table for a rollout (the emulated cell's scripted hands); default the layout as planned. */
  readonly tableLayout?: (r: SessionRunRequest) => SessionRunRequest['layout'];
  /** Lines for the operator; a blind session gets no line that names a policy. */
  log(line: string): void;
  /** The operator's takeover with a leader arm, in every rollout of the session (as `rig rollout --leader`). */
  readonly takeover?: SessionTakeover;
  /**
   * Where the rig comes from when something else owns it (the station's rig host, which also
   * shows it live and takes the E-stop): `use` runs with that rig, and the owner keeps it after.
   * Default: a rig created from the station config's rig for each rollout and closed after it.
   */
  withRig?<T>(
    table: NonNullable<RigContext['table']>,
    use: (rig: Rig, clock: Clock, signal: AbortSignal, services: RigServices) => Promise<T>,
  ): Promise<T>;
}

export class RigSessionRunner implements SessionRolloutRunner {
  private readonly policies = new Map<string, Policy>();

  private constructor(private readonly o: RigSessionRunnerOptions) {}

  /** Opens every policy of the plan first: a spec that does not load is refused before anything moves. */
  static async open(
    o: RigSessionRunnerOptions,
    specs: readonly string[],
    io: Pick<CliIo, 'cwd'>,
  ): Promise<RigSessionRunner> {
    const r = new RigSessionRunner(o);
    try {
      for (const spec of specs) r.policies.set(spec, await openRigPolicy(spec, io));
    } catch (e) {
      await r.close();
      throw e;
    }
    return r;
  }

  /** The operator's takeover of the running rollout, when the session has a leader. */
  get takeover(): SessionTakeover | undefined {
    return this.o.takeover;
  }

  /** What each opened policy reads, by spec (for the pre-flight). */
  policyInfo(spec: string): Policy['info'] | undefined {
    return this.policies.get(spec)?.info;
  }

  async close(): Promise<void> {
    for (const p of this.policies.values()) await p.close?.();
    this.policies.clear();
  }

  async run(r: SessionRunRequest): Promise<SessionRunOutcome> {
    try {
      return await this.runOnRig(r);
    } catch (e) {
      // "could not run" reaches the operator too: in a blind session, by label.
      if (!this.o.blind || !(e instanceof Error)) throw e;
      const name = this.policies.get(r.spec)?.info.name ?? r.spec;
      throw new UserError(
        e.message.split(r.spec).join(r.label).split(name).join(r.label),
        e instanceof UserError ? e.exitCode : 1,
      );
    }
  }

  private async runOnRig(r: SessionRunRequest): Promise<SessionRunOutcome> {
    const policy = this.policies.get(r.spec);
    if (!policy) throw new Error(`the session has no open policy for ${r.label}`);
    const rigType = this.o.station.rig.type;
    // The table as placed (a world of its own builds it; hardware ignores it); the rollout is still scored against the plan's layout.
    const table = {
      task: r.task,
      layout: this.o.tableLayout ? this.o.tableLayout(r) : r.layout,
      placementSeed: r.seed,
    };
    const board = this.o.cellIo?.board;
    const episode = async (
      rig: Rig,
      services: RigServices,
      clock: Clock,
      signal: AbortSignal,
    ): Promise<RolloutOnRig> => {
      let run: RolloutOnRig | undefined;
      board?.update({ sessionId: String(r.sessionId), rolloutPhase: 'running', rigStatus: 'active', faults: [] });
      const rollout = (takeover?: OperatorTakeover): Promise<RolloutOnRig> =>
        rolloutOnRig({
          rig,
          services,
          rigType,
          station: this.o.station,
          policy,
          task: r.task,
          layout: r.layout,
          seconds: r.episodeSeconds,
          rateHz: this.o.rateHz,
          deadlineMs: this.o.deadlineMs,
          seed: r.seed,
          scoreFromCell: this.o.lookAtTable,
          blankCameras: this.o.blankCameras,
          signal,
          clock,
          // rolloutOnRig names the policy in its line: the session says "policy A" instead.
          log: () =>
            this.o.log(
              `Rollout ${r.slot + 1}: ${r.label} runs for ${r.episodeSeconds} s — rig: ${rigTypeWords(String(rigType))}.`,
            ),
          // Blind: the file is named by session, slot and attempt; the plan's key maps the slot to its policy.
          record: {
            store: this.o.store,
            dir: this.o.episodesDir,
            spec: r.spec,
            set: this.o.set,
            ...(this.o.blind ? { fileLabel: `session${r.sessionId}-slot${r.slot + 1}-attempt${r.attempt + 1}` } : {}),
          },
          ...(takeover ? { takeover } : {}),
        });
      try {
        // The leader comes up for this rollout on its clock and goes down after it, as in `rig rollout --leader`.
        const takeover = this.o.takeover;
        run = takeover ? await takeover.during(clock, rollout) : await rollout();
        return run;
      } finally {
        board?.rolloutEnded(rig.read().mode, run?.result.episode);
      }
    };
    let run: RolloutOnRig;
    if (this.o.withRig) {
      run = await this.o.withRig(table, (rig, clock, ownerSignal, services) =>
        episode(rig, services, clock, AbortSignal.any([r.signal, ownerSignal])),
      );
    } else {
      let rig: Rig;
      let services: RigServices;
      let clock: Clock;
      try {
        clock = clockForRigConfig(this.o.station.rig);
        // The safety supervisor reads the interlock from the first cycle: created with the rig.
        const interlock = this.o.cellIo?.plc;
        ({ rig, services } = await createStationRig(this.o.station.rig, {
          clock,
          signal: r.signal,
          table,
          ...(interlock ? { interlock } : {}),
        }));
      } catch (e) {
        if (e instanceof RigError) throw new UserError(e.message);
        throw e;
      }
      try {
        run = await episode(rig, services, clock, r.signal);
      } finally {
        await rig.close?.();
      }
    }
    const tableEndStates = run.score?.endStates;
    const { rolloutId } = await storeRolloutOnRig(
      this.o.store,
      { spec: r.spec, policy: policy.info, set: this.o.set, sessionId: r.sessionId },
      { ...run, score: undefined },
    );
    const e = run.result.episode;
    // The stored rollout keeps the words as they were; the operator's copy says "policy A".
    const told = (t: string): string =>
      this.o.blind ? t.split(r.spec).join(r.label).split(policy.info.name).join(r.label) : t;
    return {
      rolloutId,
      status: e.status,
      ...(e.reason ? { reason: told(e.reason) } : {}),
      ...(e.error ? { policyError: told(e.error) } : {}),
      ...(run.recording ? { episodeFile: run.recording.file } : {}),
      finalMode: run.result.finalMode,
      wallS: run.result.wallMs / 1000,
      ...(tableEndStates && e.status === 'valid' ? { tableEndStates } : {}),
    };
  }
}
