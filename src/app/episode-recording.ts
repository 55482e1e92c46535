/**
 * Recording an episode from the station: the composition of the store and src/record. The store
 * row is committed before the file's first byte and finished after its last, so a file cut off by
 * a crash is always known (`unfinishedRecordings`, listed when the station starts).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock, RigModel } from '../rig/contract.js';
import type { RigCycleSource } from '../rig/rig-cycle-ring.js';
import type { Camera } from '../rig/camera.js';
import { EpisodeRecorder, RecordingError, type RecordingSummary } from '../record/episode-recorder.js';
import type { RecordingEnd, RecordingKind, RecordingRecord, Store } from '../store/store.js';
import { yamRigModel } from '../rig/yam.js';
import { UserError } from './command.js';
import { tandemVersion } from './version.js';

/** Where episode files go by default: <data dir>/episodes. */
export function defaultEpisodesDir(dataDir: string): string {
  return join(dataDir, 'episodes');
}

/** A file name that sorts by time and says what it is: 20261201T131500.123Z-bottles-in-the-bin-L3-hold.mcap */
export function episodeFileName(what: { task: string; layoutIndex: number; policyName: string; at?: Date }): string {
  const stamp = (what.at ?? new Date()).toISOString().replace(/[-:]/g, '');
  const slug = (s: string): string =>
    s
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 48) || 'x';
  return `${stamp}-${slug(what.task)}-L${what.layoutIndex}-${slug(what.policyName)}.mcap`;
}

/** The `tandem.episode` metadata of a rollout's file: what ran, on what, with which calibrations. */
export function rolloutMetadata(r: {
  kind: 'real' | 'sim';
  task: { id: string; prompt: string };
  layoutSetSha256: string;
  layout: { index: number; tier: number };
  policySpec: string;
  policy: { name: string; checkpointSha256?: string };
  rig: string;
  rigModel: string;
  /** kind:sha256 of each calibration the rollout ran with. */
  calibrations: readonly string[];
  operator?: string;
  controlHz: number;
  episodeSeconds: number;
  seed: number;
  /** Why the rollout is a rehearsal, not a result (absent: a result). */
  rehearsal?: string;
}): Record<string, string> {
  return {
    kind: r.kind,
    task: r.task.id,
    prompt: r.task.prompt,
    layout_set_sha256: r.layoutSetSha256,
    layout_index: String(r.layout.index),
    tier: String(r.layout.tier),
    policy_spec: r.policySpec,
    policy_name: r.policy.name,
    checkpoint_sha256: r.policy.checkpointSha256 ?? '',
    rig: r.rig,
    rig_model: r.rigModel,
    calibrations: r.calibrations.join(','),
    operator: r.operator ?? '',
    control_hz: String(r.controlHz),
    episode_seconds: String(r.episodeSeconds),
    seed: String(r.seed),
    rehearsal: r.rehearsal ? 'true' : 'false',
    ...(r.rehearsal ? { rehearsal_reason: r.rehearsal } : {}),
  };
}

/**
 * A sim rollout's episode file (no store row: the caller registers it if it stores the rollout).
 * Stamps are sim time from the rollout's start, moved to the Unix time the file is opened.
 */
export function openSimEpisodeRecorder(
  file: string,
  r: Omit<Parameters<typeof rolloutMetadata>[0], 'kind' | 'rig' | 'rigModel' | 'calibrations' | 'operator'> & {
    calibrationSha256: string;
  },
): Promise<EpisodeRecorder> {
  const rigModel = yamRigModel();
  const { calibrationSha256, ...rest } = r;
  return EpisodeRecorder.open({
    file,
    rigModel,
    metadata: rolloutMetadata({
      ...rest,
      kind: 'sim',
      rig: 'sim',
      rigModel: rigModel.name,
      calibrations: [`sim:${calibrationSha256}`],
    }),
    unixOffsetS: Date.now() / 1000,
  });
}

/** How a closed recording ended, as its store row says it. */
export function recordingEnd(summary: RecordingSummary): RecordingEnd {
  return {
    state: summary.status === 'finished' ? 'finished' : 'failed',
    bytes: summary.bytes,
    messages: summary.messages,
    durationS: summary.durationS,
    problem: summary.failure ?? null,
  };
}

/** The line a command prints about its episode file (nothing without one). */
export function recordingLine(r: RecordingSummary | undefined): string {
  if (!r) return '';
  if (r.status !== 'finished') return `RECORDING PROBLEM: ${r.failure ?? 'the episode file is not finished'}\n`;
  return `recorded ${r.file} (${(r.bytes / 1048576).toFixed(1)} MiB, ${r.messages} messages, closed in ${r.closeMs.toFixed(0)} ms)\n${r.problems.map((p) => `RECORDING PROBLEM: ${p}\n`).join('')}`;
}

export interface EpisodeRecordingOptions {
  readonly store: Store;
  readonly dir: string;
  readonly kind: RecordingKind;
  readonly fileName: string;
  readonly rigModel: RigModel;
  readonly clock: Clock;
  readonly cameras?: readonly Camera[];
  /** What the episode is (task, layout set and index, policy, rig, calibrations, operator …). */
  readonly metadata: Readonly<Record<string, string>>;
  /** A rig thread's motor cycles, recorded every one (rigCyclesOf(rig)). */
  readonly rigCycles?: ReturnType<RigCycleSource['rigCycles']>;
}

export interface StationRecording {
  readonly recorder: EpisodeRecorder;
  readonly id: number;
  readonly file: string;
  /** Finishes the file, records how it ended in the store and links it to the rollout. */
  finish(rolloutId: number | undefined, end: Readonly<Record<string, string>>): Promise<RecordingSummary>;
}

/** Opens the episode file and registers it; throws UserError (nothing moved yet) when it cannot. */
export async function openStationRecording(o: EpisodeRecordingOptions): Promise<StationRecording> {
  try {
    mkdirSync(o.dir, { recursive: true });
  } catch (e) {
    throw new UserError(
      `Cannot create the episode folder ${o.dir}: ${(e as Error).message}. Choose a writable folder (--episodes DIR).`,
    );
  }
  const file = join(o.dir, o.fileName);
  const { version, commit } = tandemVersion();
  const id = o.store.startRecording({ file, kind: o.kind });
  let recorder: EpisodeRecorder;
  try {
    recorder = await EpisodeRecorder.open({
      file,
      rigModel: o.rigModel,
      cameras: (o.cameras ?? []).map((c) => c.info),
      metadata: { ...o.metadata, tandem_version: version, tandem_commit: commit, started_at: new Date().toISOString() },
      // Stamps in Unix time, as ROS tools expect; the rig clock's own time is kept beside it.
      unixOffsetS: Date.now() / 1000 - o.clock.nowS(),
      ...(o.rigCycles ? { rigCycles: o.rigCycles } : {}),
    });
  } catch (e) {
    o.store.endRecording(id, { state: 'failed', problem: (e as Error).message });
    if (e instanceof RecordingError) throw new UserError(e.message);
    throw e;
  }
  for (const cam of o.cameras ?? []) recorder.attachCamera(cam, () => o.clock.nowS());
  return {
    recorder,
    id,
    file,
    async finish(rolloutId, end) {
      const summary = await recorder.close(end);
      o.store.endRecording(id, recordingEnd(summary));
      if (rolloutId !== undefined) o.store.linkRecording(id, rolloutId);
      return summary;
    },
  };
}

/**
 * Episode files a crash cut off (still 'recording' with nothing recording) or a failed write
 * stopped — those on the disk (a file that could not even be created has nothing to recover).
 */
export function unfinishedRecordings(store: Store): RecordingRecord[] {
  return store.listRecordings({ states: ['recording', 'failed'] }).filter((r) => existsSync(r.file));
}
