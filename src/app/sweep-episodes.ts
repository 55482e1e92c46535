/**
 * What a sim sweep (in-process or queued) keeps of each rollout: its store row and its episode
 * file, written one after the other on the main thread as rollouts come back.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CliIo } from './command.js';
import type { TaskDefinition } from '../tasks/types.js';
import type { LayoutSet } from '../layouts/layout-set.js';
import type { SweepRollout } from '../sim/sweep.js';
import type { RolloutInput, Store } from '../store/store.js';
import { episodeFileName, openSimEpisodeRecorder, recordingEnd } from './episode-recording.js';
import { replayRecording } from '../sim/recording-relay.js';

/** A sweep rollout as the store's row (in-process and queued sweeps store the same fields). */
export function sweepRolloutInput(
  r: SweepRollout,
  w: { policyId: number; layoutSetSha256: string; sessionId: number; calibrationSha256s: readonly string[] },
): RolloutInput {
  return {
    kind: 'sim',
    policyId: w.policyId,
    layoutSetSha256: w.layoutSetSha256,
    layoutIndex: r.job.layoutIndex,
    tier: r.tier,
    sessionId: w.sessionId,
    seed: r.job.seed,
    repeatIndex: r.job.repeat,
    episodeSeconds: r.episodeSeconds,
    controlHz: r.controlHz,
    status: r.status,
    outcome: r.outcome,
    statusReason: r.reason ?? null,
    policyError: r.error ?? null,
    progress: r.status === 'valid' ? (r.progress ?? null) : null,
    counts: r.status === 'valid' ? (r.counts ?? null) : null,
    finalStateHash: r.finalStateHash || null,
    calibrationSha256s: w.calibrationSha256s,
    durationS: r.wallMs / 1000,
    taskEvents: r.taskEvents ?? [],
  };
}

/** The sweep's episode files, written one after the other on the main thread as rollouts come back. */
export class EpisodeWrites {
  private chain: Promise<void> = Promise.resolve();
  problems = 0;
  constructor(private readonly io: CliIo) {}
  /** Queues one file's work; resolves true once it is written, false when it failed (said on stderr). */
  add(work: () => Promise<void>): Promise<boolean> {
    const written = this.chain.then(work).then(
      () => true,
      (e: unknown) => {
        this.problems += 1;
        this.io.err(`\nAn episode file could not be written: ${(e as Error).message}\n`);
        return false;
      },
    );
    this.chain = written.then(() => undefined);
    return written;
  }
  done(): Promise<void> {
    return this.chain;
  }
}

/**
 * One sweep rollout's episode file: registered in the store now (before its first byte), written
 * from the calls its worker kept, finished and linked to its rollout row. `written` resolves once
 * the file is finished (true) or could not be (false); linkTo may come before or after that.
 */
export function recordSweepEpisode(
  store: Store,
  dir: string,
  r: SweepRollout,
  w: { set: LayoutSet; spec: string; task: TaskDefinition; seconds: number },
  writes: EpisodeWrites,
): { file: string; written: Promise<boolean>; linkTo(rolloutId: number): void } {
  mkdirSync(dir, { recursive: true });
  const file = join(
    dir,
    episodeFileName({
      task: w.task.id,
      layoutIndex: r.job.layoutIndex,
      policyName: `sim-r${r.job.repeat}-${r.policyName}`,
    }),
  );
  const id = store.startRecording({ file, kind: 'rollout' });
  let rolloutId: number | undefined;
  let ended = false;
  const written = writes.add(async () => {
    const rec = await openSimEpisodeRecorder(file, {
      task: w.task,
      layoutSetSha256: w.set.sha256,
      layout: { index: r.job.layoutIndex, tier: r.tier },
      policySpec: w.spec,
      policy: { name: r.policyName, checkpointSha256: r.policyCheckpointSha256 },
      // The record this rollout ran on: with --randomize, its own drawn one, not the sweep's base.
      calibrationSha256: r.calibrationSha256,
      controlHz: r.controlHz,
      episodeSeconds: w.seconds,
      seed: r.job.seed,
    });
    replayRecording(r.recorded!, rec);
    const summary = await rec.close({ outcome: r.outcome, status: r.status });
    store.endRecording(id, recordingEnd(summary));
    ended = true;
    if (rolloutId !== undefined) store.linkRecording(id, rolloutId);
  });
  return {
    file,
    written,
    linkTo(idOfRollout) {
      rolloutId = idOfRollout;
      if (ended) store.linkRecording(id, idOfRollout);
    },
  };
}
