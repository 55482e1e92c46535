/**
 * Sweeps beyond one machine: `tandem sim sweep … --queue redis://…` (the coordinator; this
 * process is the one writer of the store) and `tandem sim worker --queue redis://…` (runs the
 * rollouts, anywhere). The queue work lives in src/sim/queue; this file turns it into commands.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import type { LayoutSet } from '../../layouts/layout-set.js';
import type { Store, RolloutRecord } from '../../store/store.js';
import type { SimCalibration } from '../../sim/calibration.js';
import type { SweepRollout } from '../../sim/sweep.js';
import { parseQueueUrl, QueueError, type QueueAddress } from '../../sim/queue/connection.js';
import { checkQueue, runQueuedSweep, type QueuedSweepOptions } from '../../sim/queue/coordinator.js';
import { isQueueSafeSpec, simJobId } from '../../sim/queue/job.js';
import { runQueueWorker } from '../../sim/queue/worker.js';
import { HealthPortError } from '../../sim/queue/worker-health.js';
import type { SweepWorlds } from './sim.js';
import { EpisodeWrites, recordSweepEpisode, sweepRolloutInput } from '../sweep-episodes.js';
import { progressLine, reportSweep, type SweepRow } from '../sweep-report.js';
import type { CollectedRecording } from '../../sim/queue/coordinator.js';
import type { TaskDefinition } from '../../tasks/types.js';
import type { HashedRandomizationSpec } from '../../sim/randomization.js';

export function queueAddressArg(text: string): QueueAddress {
  try {
    return parseQueueUrl(text);
  } catch (e) {
    if (e instanceof QueueError) throw new UserError(e.message);
    throw e;
  }
}

/** How the queue carries the sweep's policy: a spec that loads nothing from disk, or the ONNX file's bytes. */
function queuedPolicy(spec: string, io: CliIo): QueuedSweepOptions['policy'] {
  if (spec.startsWith('onnx:')) {
    const path = spec.slice('onnx:'.length);
    return { kind: 'onnx', bytes: readFileSync(isAbsolute(path) ? path : resolve(io.cwd, path)) };
  }
  if (!isQueueSafeSpec(spec))
    throw new UserError(
      `Policy '${spec}' cannot go over the queue; workers take code:NAME, ws://host:port and onnx:FILE (sent by its hash).`,
    );
  return { kind: 'spec', spec };
}

function rowOf(r: RolloutRecord): SweepRow {
  return {
    layoutIndex: r.layoutIndex,
    tier: r.tier,
    status: r.status,
    outcome: r.outcome,
    reason: r.statusReason ?? undefined,
    error: r.policyError ?? undefined,
    progress: r.status === 'valid' ? (r.progress ?? undefined) : undefined,
    counts: r.counts ?? undefined,
  };
}

export interface QueuedSweepCommandInput {
  readonly store: Store;
  readonly set: LayoutSet;
  readonly spec: string;
  readonly policyName: string;
  readonly policyId: number;
  readonly checkpointSha256: string | null;
  readonly repeats: number;
  readonly seconds: number;
  readonly calibration: SimCalibration;
  readonly calibrationSha256: string;
  readonly randomization: HashedRandomizationSpec | undefined;
  readonly worlds: SweepWorlds;
  readonly address: QueueAddress;
  readonly attempts: number;
  /** --record DIR: each rollout's episode file goes here (written by this process from the worker's recording). */
  readonly recordDir?: string;
  readonly task: TaskDefinition;
}

/** The coordinator: resumes an unfinished sweep of the same request on the same queue, else starts one. */
export async function runQueuedSweepCommand(
  args: ParsedCommandArgs,
  io: CliIo,
  input: QueuedSweepCommandInput,
): Promise<number> {
  const { store, set, spec, address } = input;
  const policy = queuedPolicy(spec, io);
  // Redis first: an unreachable queue or one of another version leaves nothing in the store.
  try {
    await checkQueue(address);
  } catch (e) {
    if (e instanceof QueueError) throw new UserError(e.message);
    throw e;
  }
  const total = set.layouts.length * input.repeats;
  const request = createHash('sha256')
    .update(
      JSON.stringify({
        layoutSet: set.sha256,
        spec,
        checkpoint: input.checkpointSha256,
        repeats: input.repeats,
        seconds: input.seconds,
        calibration: input.calibrationSha256,
        randomization: input.randomization?.sha256 ?? null,
        // A sweep that records is another request: resumed without --record, half its rollouts would have files.
        ...(input.recordDir === undefined ? {} : { record: true }),
      }),
    )
    .digest('hex');
  let sweep = store.findUnfinishedSweep(request, address.shown);
  if (sweep) {
    io.err(
      `Resuming sweep ${sweep.id} (session ${sweep.sessionId}): ${store.sweepRolloutKeys(sweep.id).size} of ${total} rollouts already stored.\n`,
    );
  } else {
    const session = store.createSession({
      kind: 'sim-sweep',
      notes: `${spec} on ${set.task} v${set.version} (${set.sha256.slice(0, 12)}…), ${input.repeats} repeat(s), ${input.seconds} s, over the queue ${address.shown}`,
    });
    sweep = store.createSweep({
      id: randomBytes(9).toString('base64url'),
      sessionId: session.id,
      requestSha256: request,
      queue: address.shown,
      total,
    });
  }
  const { id: sweepId, sessionId } = sweep;
  const startMs = Date.now();
  let lastDraw = 0;
  const draw = (done: number, force = false): void => {
    const now = Date.now();
    if (!force && now - lastDraw < 200) return;
    lastDraw = now;
    io.err(`\r${progressLine(done, total, (now - startMs) / 1000)}`);
  };
  const { recordDir } = input;
  const writes = new EpisodeWrites(io);
  let episodeFiles = 0;
  let withoutFile = 0;
  /** Stores one collected rollout; with --record, its episode file is finished first, then the row links it. */
  const onRollout = async (r: SweepRollout, recording?: CollectedRecording): Promise<boolean> => {
    const row = {
      ...sweepRolloutInput(r, {
        policyId: input.policyId,
        layoutSetSha256: set.sha256,
        sessionId,
        calibrationSha256s: input.worlds.calibrationsOf(r.job.layoutIndex, r.job.repeat),
      }),
      sweepId,
    };
    if (recordDir === undefined || recording === undefined) return store.insertSweepRollout(row).inserted;
    if ('problem' in recording) {
      withoutFile += 1;
      io.err(
        `\njob ${simJobId(sweepId, r.job.layoutIndex, r.job.repeat)} (layout ${r.job.layoutIndex} repeat ${r.job.repeat}, ${spec}): stored without its episode file: ${recording.problem}\n`,
      );
      return store.insertSweepRollout(row).inserted;
    }
    const episode = recordSweepEpisode(
      store,
      recordDir,
      { ...r, recorded: recording.calls },
      { set, spec, task: input.task, seconds: input.seconds },
      writes,
    );
    const written = await episode.written;
    const stored = store.insertSweepRollout({ ...row, episodeFile: written ? episode.file : null });
    // Not new (never expected: the coordinator fetches no recording for a rollout it has): the file stays unlinked.
    if (written && stored.inserted) {
      episode.linkTo(stored.id);
      episodeFiles += 1;
    } else if (!written) withoutFile += 1;
    return stored.inserted;
  };
  let outcome;
  try {
    outcome = await runQueuedSweep({
      address,
      sweepId,
      layoutSet: set,
      policy,
      repeats: input.repeats,
      seconds: input.seconds,
      calibration: input.calibration,
      worldFor: input.worlds.worldFor,
      alreadyStored: store.sweepRolloutKeys(sweepId),
      attempts: input.attempts,
      signal: io.signal,
      record: recordDir !== undefined,
      onRollout,
      onProgress: (done) => draw(done),
      onNoWorkers: () =>
        io.err(
          `\nNo worker is taking jobs from ${address.shown} yet; start one with: tandem sim worker --queue ${address.shown}\n`,
        ),
      log: (line) => io.err(`\n${line}\n`),
    });
  } catch (e) {
    await writes.done();
    io.err('\n');
    // The session stays open: the same command again resumes this sweep.
    if (e instanceof QueueError)
      throw new UserError(
        `${e.message} The sweep (session ${sessionId}) keeps what it stored; run the same command again to resume it.`,
      );
    throw e;
  }
  draw(outcome.stored, true);
  io.err('\n');
  // Stopped without Redis, the sweep's jobs are still queued: its session stays open for the same command to resume.
  if (!outcome.stoppedWithoutRedis)
    store.endSession(
      sessionId,
      outcome.stopped
        ? { notes: `${store.getSession(sessionId)?.notes ?? ''}; stopped at ${outcome.stored} of ${total}` }
        : {},
    );
  const rows = store.listRollouts({ sessionId }).map(rowOf);
  reportSweep(
    io,
    args.values.json === true,
    {
      sessionId,
      set,
      spec,
      policyName: input.policyName,
      total,
      stopped: outcome.stopped,
      calibrationSha256: input.calibrationSha256,
      wallMs: outcome.wallMs,
      extraJson: {
        queue: address.shown,
        sweep: sweepId,
        collected: outcome.rollouts.length,
        duplicates: outcome.duplicates,
        // Of the rollouts this run collected: episode files written, and rollouts stored without one (each said on stderr).
        ...(recordDir === undefined ? {} : { episodeFiles, withoutEpisodeFile: withoutFile }),
      },
    },
    rows,
  );
  if (recordDir !== undefined && args.values.json !== true) {
    io.out(
      `${episodeFiles} episode file${episodeFiles === 1 ? '' : 's'} written into ${recordDir}${withoutFile > 0 ? `; ${withoutFile} rollout${withoutFile === 1 ? '' : 's'} stored without one (each said why on stderr)` : ''}.\n`,
    );
  }
  if (outcome.stoppedWithoutRedis) {
    io.err(
      `Stopped with Redis at ${address.shown} unreachable: ${outcome.stored} of ${total} rollouts are stored (session ${sessionId}) and the rest stay queued; once Redis is back, run the same command again to resume the sweep.\n`,
    );
    return 1;
  }
  return outcome.stopped ? 130 : 0;
}

/** --health-port P or HOST:P (loopback unless a host is given). */
function healthArg(text: string | undefined): { host: string; port: number } | undefined {
  if (text === undefined) return undefined;
  const m = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(text);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535)
    throw new UserError(`--health-port '${text}' is not a port; write PORT (on 127.0.0.1) or HOST:PORT.`);
  return { host: m[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1', port };
}

const worker: CliCommand = {
  path: ['sim', 'worker'],
  summary: 'take sim rollouts from a sweep queue (Redis) and run them, on any machine',
  help: `Usage: tandem sim worker --queue redis://HOST:PORT[/DB] [--concurrency N] [--lock-seconds S]
                         [--give-up-after S] [--health-port [HOST:]PORT]

Runs the rollouts that 'tandem sim sweep --queue' coordinators put on the queue, N at a time on
rollout threads, until SIGTERM or Ctrl-C. It needs only the queue:
layout sets and ONNX models come through Redis by their SHA-256 and are checked on arrival;
a job naming anything else (a file, a module) is refused. For a sweep with --record, it puts
each rollout's recording into Redis for the coordinator, which writes the episode file. Give a
password as redis://:PASSWORD@HOST:PORT. See docs/distributed-sweeps.md.

SIGTERM or Ctrl-C stops it within a few seconds whatever Redis does: running rollouts end, their
jobs go back to the queue (or, with Redis unreachable, to another worker once their lock lapses).
Exit 0 on a clean stop, 1 when it left a job claimed or gave up on Redis. A Redis that goes away
is said once, and once more when it is back.

  --queue URL          the sweep queue's Redis
  --concurrency N      rollouts at once (default 1; one per core is the most that helps)
  --lock-seconds S     how long a job stays claimed by a worker that stops answering before
                       another takes it (default 30)
  --give-up-after S    stop (exit 1) when Redis has been unreachable S seconds (default: keep retrying)
  --health-port P      answer GET /health and /ready over HTTP on 127.0.0.1:P (or HOST:P)`,
  options: {
    queue: { type: 'string' },
    concurrency: { type: 'string' },
    'lock-seconds': { type: 'string' },
    'give-up-after': { type: 'string' },
    'health-port': { type: 'string' },
  },
  async run(args, io) {
    const address = queueAddressArg(requireString(args, 'queue'));
    const concurrency = intOption(args, 'concurrency', 1, 1, 64);
    const lockSeconds = numberOption(args, 'lock-seconds', 30, 1, 3600);
    const giveUpAfter =
      args.values['give-up-after'] === undefined
        ? undefined
        : numberOption(args, 'give-up-after', undefined, 1, 7 * 24 * 3600);
    const health = healthArg(args.values['health-port'] as string | undefined);
    let summary;
    try {
      summary = await runQueueWorker({
        address,
        concurrency,
        lockMs: lockSeconds * 1000,
        signal: io.signal,
        log: (line) => io.err(`${line}\n`),
        ...(giveUpAfter === undefined ? {} : { giveUpAfterMs: giveUpAfter * 1000 }),
        ...(health === undefined
          ? {}
          : {
              health,
              onHealthListening: (port: number) =>
                io.err(
                  `Health probes: http://${health.host.includes(':') ? `[${health.host}]` : health.host}:${port}/health and /ready\n`,
                ),
            }),
      });
    } catch (e) {
      if (e instanceof QueueError || e instanceof HealthPortError) throw new UserError(e.message);
      throw e;
    }
    if (summary.refusedVersion !== undefined) {
      io.out(`${summary.completed} job${summary.completed === 1 ? '' : 's'} done, ${summary.failed} failed.\n`);
      return 2;
    }
    io.err(`${summary.stopped}\n`);
    return summary.clean ? 0 : 1;
  },
};

export const commands: CliCommand[] = [worker];
