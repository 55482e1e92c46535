/**
 * `tandem sim generate`: training data from the sim — rollouts of a policy (a privileged code
 * policy, or a learned one) on a layout set, each recorded as an episode file, kept or rejected
 * with a reason, and the kept ones exported as one LeRobot v3.0 dataset with each episode's
 * source. Resumable: every finished attempt is a line in DIR/attempts.jsonl (written after its
 * file is in place), and attempts are deterministic (src/sim/generation.ts), so a killed run
 * started again drops what was half-written and carries on at the next attempt — no duplicate,
 * no missing episode.
 */
import { EPISODE_CONTROL_HZ } from '../../rollout/run-episode.js';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand, type CliIo } from '../command.js';
import { readLayoutSetFile, readUserFile } from './layouts.js';
import { calibrationArg, openPolicyForCli } from './sim.js';
import { openSimEpisodeRecorder } from '../episode-recording.js';
import { runSimRollout } from '../../sim/sim-rollout.js';
import {
  drawWorld,
  parseRandomizationSpec,
  RandomizationSpecError,
  type HashedRandomizationSpec,
} from '../../sim/randomization.js';
import { simCalibrationHash } from '../../sim/calibration.js';
import { attemptAt, attemptBound, judgeEpisode, type KeepRule } from '../../sim/generation.js';
import { exportLeRobot, ExportError } from '../../record/lerobot-export.js';
import { RecordingError, type EpisodeRecorder, type RecordingSummary } from '../../record/episode-recorder.js';
import { getTask } from '../../tasks/registry.js';

const RUN_FORMAT = 'tandem.sim-generate/1';

interface AttemptLine {
  readonly attempt: number;
  readonly layoutIndex: number;
  readonly seed: number;
  readonly kept: boolean;
  readonly reason?: string;
  readonly progress: number | null;
  readonly file?: string;
}

const isDiskFull = (text: string | undefined): boolean => text !== undefined && /ENOSPC|no space left/i.test(text);

/** Writes a small file whole or not at all (temp file, fsync, rename). */
function writeWhole(file: string, text: string): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * The attempts file's lines. Only its last line can be cut short (a kill mid-write): that attempt
 * is made again, and the file is rewritten without it so the next line starts clean.
 */
function readAttempts(file: string): AttemptLine[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: AttemptLine[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as AttemptLine);
    } catch {
      if (i < lines.length - 1)
        throw new UserError(
          `${file} line ${i + 1} is not JSON; it was changed by hand — move the folder aside and generate into a new --out.`,
        );
      writeWhole(file, out.map((a) => `${JSON.stringify(a)}\n`).join(''));
    }
  }
  return out;
}

function appendAttempt(file: string, line: AttemptLine): void {
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${JSON.stringify(line)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function randomizeArg(io: CliIo, file: unknown): HashedRandomizationSpec | undefined {
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '')
    throw new UserError('--randomize needs a randomization spec file (docs/sim.md).');
  const { path, text } = readUserFile(io, file, 'randomization spec');
  try {
    return parseRandomizationSpec(text, path);
  } catch (e) {
    if (e instanceof RandomizationSpecError) throw new UserError(e.message);
    throw e;
  }
}

const generate: CliCommand = {
  path: ['sim', 'generate'],
  summary:
    'generate training episodes in the sim (kept/rejected with reasons) as MCAPs and a LeRobot v3.0 dataset; resumable',
  help: `Usage: tandem sim generate --policy SPEC --layouts FILE --episodes N --out DIR [--success-only] [--min-progress P]
                           [--max-attempts M] [--seconds S] [--randomize SPEC] [--calibration FILE] [--fps F] [--json]

Runs the policy in the sim, attempt after attempt (attempt a: layout a mod L, seed ⌊a / L⌋), records
each episode (state, commanded actions, the task's prompt) and keeps the ones that pass, until N
are kept; then writes DIR/lerobot, a LeRobot v3.0 dataset of the kept episodes, each with its
source (sim-privileged for a code policy, sim-policy otherwise) in meta/episodes' tandem/source.
Run it again with the same arguments after a kill, a full disk or Ctrl-C: it carries on where it
stopped, with no duplicate or missing episode (a larger --episodes extends the set).

  --policy SPEC       a code policy (code:bottles-in-the-bin) or a learned one (onnx:…, ws://…)
  --layouts FILE      the layout set (a focused one from tandem layouts sample --randomize)
  --episodes N        episodes to keep
  --out DIR           DIR/episodes/*.mcap, DIR/attempts.jsonl (every attempt, kept or why not), DIR/lerobot
  --success-only      keep only episodes that did the whole task
  --min-progress P    keep only episodes with at least this task progress (default 0)
  --max-attempts M    stop after M attempts in all (default 4 × N, at least 10)
  --seconds S         episode length (default: the task's)
  --randomize SPEC    draw each attempt's physics, placement and look from a randomization spec
  --calibration FILE  the sim calibration (default: the built-in one)
  --fps F             the dataset's frames per second (default 30)

Cameras: the sim's three cameras are not rendered into generated episodes yet; the dataset holds
observation.state and action only (--cameras is refused with a sentence).`,
  options: {
    policy: { type: 'string' },
    layouts: { type: 'string' },
    episodes: { type: 'string' },
    out: { type: 'string' },
    'success-only': { type: 'boolean' },
    'min-progress': { type: 'string' },
    'max-attempts': { type: 'string' },
    seconds: { type: 'string' },
    randomize: { type: 'string' },
    calibration: { type: 'string' },
    fps: { type: 'string' },
    cameras: { type: 'string' },
  },
  async run(args, io) {
    if (args.values.cameras !== undefined)
      throw new UserError(
        '--cameras: this version does not render the sim cameras into generated episodes yet (the dataset holds state and actions); leave --cameras out.',
      );
    const spec = requireString(args, 'policy');
    const { set } = readLayoutSetFile(io, requireString(args, 'layouts'));
    const task = getTask(set.task);
    const episodes = intOption(args, 'episodes', undefined, 1, 100_000);
    const out = resolve(io.cwd, requireString(args, 'out'));
    const rule: KeepRule = {
      successOnly: args.values['success-only'] === true,
      minProgress: numberOption(args, 'min-progress', 0, 0, 1),
    };
    const bound = attemptBound(
      episodes,
      args.values['max-attempts'] === undefined ? undefined : intOption(args, 'max-attempts', undefined, 1, 1_000_000),
    );
    const seconds = numberOption(args, 'seconds', task.episodeSeconds, 0.1, 3600);
    const fps = intOption(args, 'fps', 30, 1, 240);
    const randomization = randomizeArg(io, args.values.randomize);
    const base = calibrationArg(args, io);

    // The run's identity: resuming with other arguments would mix two data sets in one folder.
    const identity = {
      format: RUN_FORMAT,
      policy: spec,
      layoutSet: set.sha256,
      randomization: randomization?.sha256 ?? null,
      calibration: simCalibrationHash(base),
      seconds,
      successOnly: rule.successOnly,
      minProgress: rule.minProgress,
    };
    const runFile = join(out, 'generate.json');
    const episodesDir = join(out, 'episodes');
    const attemptsFile = join(out, 'attempts.jsonl');
    try {
      mkdirSync(episodesDir, { recursive: true });
    } catch (e) {
      throw new UserError(`Cannot create ${episodesDir}: ${(e as Error).message}.`);
    }
    if (existsSync(runFile)) {
      let before: Record<string, unknown>;
      try {
        before = JSON.parse(readFileSync(runFile, 'utf8')) as Record<string, unknown>;
      } catch {
        throw new UserError(
          `${runFile} is not JSON; it was changed by hand — move the folder aside and generate into a new --out.`,
        );
      }
      const differs = Object.keys(identity).filter(
        (k) => JSON.stringify(before[k]) !== JSON.stringify(identity[k as keyof typeof identity]),
      );
      if (differs.length > 0)
        throw new UserError(
          `${out} holds a generation with another ${differs.join(', ')}; resume it with its own arguments, or generate into a new --out.`,
        );
    } else {
      writeWhole(runFile, `${JSON.stringify(identity, null, 2)}\n`);
    }

    // Resume: what the attempts file lists stands; anything else in episodes/ is from an attempt
    // cut short (a kill between writing its file and its line) and is made again.
    const done = readAttempts(attemptsFile);
    const keptFiles = new Set(done.filter((a) => a.kept && a.file).map((a) => a.file!));
    let removed = 0;
    for (const f of readdirSync(episodesDir)) {
      if (!keptFiles.has(f)) {
        rmSync(join(episodesDir, f), { force: true });
        removed += 1;
      }
    }
    const missing = [...keptFiles].filter((f) => !existsSync(join(episodesDir, f)));
    if (missing.length > 0)
      throw new UserError(
        `${attemptsFile} lists kept episodes whose files are gone (${missing.slice(0, 3).join(', ')}); restore them, or generate into a new --out.`,
      );
    let kept = done.filter((a) => a.kept).length;
    let attempt = done.length === 0 ? 0 : Math.max(...done.map((a) => a.attempt)) + 1;
    if (done.length > 0 && !args.values.json)
      io.err(
        `Resuming ${out}: ${kept} kept of ${done.length} attempts${removed ? `, ${removed} unfinished file${removed === 1 ? '' : 's'} dropped` : ''}.\n`,
      );

    const policy = await openPolicyForCli(spec, io);
    // Rejections by kind (their numbers masked), for the summary and the stop sentence.
    const rejected = new Map<string, number>();
    const tally = (reason: string): void => {
      const k = reason.replace(/\d+\.\d+/g, 'P');
      rejected.set(k, (rejected.get(k) ?? 0) + 1);
    };
    for (const a of done) if (!a.kept && a.reason) tally(a.reason);
    let stop: { code: number; sentence: string } | undefined;
    try {
      while (kept < episodes) {
        if (io.signal.aborted) {
          stop = {
            code: 130,
            sentence: `Stopped: ${kept} of ${episodes} episodes kept in ${out}; run the same command again to carry on.`,
          };
          break;
        }
        if (attempt >= bound) {
          stop = {
            code: 1,
            sentence: `Stopped after ${attempt} attempts: only ${kept} of ${episodes} episodes passed (${[...rejected].map(([r, n]) => `${n} × ${r}`).join('; ') || 'none rejected'}), so ${spec} rarely passes here; lower --episodes, relax --success-only/--min-progress, or raise --max-attempts.`,
          };
          break;
        }
        const at = attemptAt(attempt, set.layouts.length);
        const layout = set.layouts[at.layoutIndex];
        const world = randomization ? drawWorld(base, randomization, at.layoutIndex, at.seed) : undefined;
        const calibration = world?.calibration ?? base;
        // Named by attempt, so the kept files sort in the order they were made.
        const name = `attempt-${String(attempt).padStart(6, '0')}-L${layout.index}`;
        const partial = join(episodesDir, `${name}.mcap.partial`);
        let recorder: EpisodeRecorder | undefined;
        let recorded: RecordingSummary | undefined;
        let result;
        try {
          recorder = await openSimEpisodeRecorder(partial, {
            task,
            layoutSetSha256: set.sha256,
            layout,
            policySpec: spec,
            policy: policy.info,
            calibrationSha256: simCalibrationHash(calibration),
            controlHz: EPISODE_CONTROL_HZ,
            episodeSeconds: seconds,
            seed: at.seed,
          });
          try {
            result = await runSimRollout({
              task,
              layout,
              policy,
              seed: at.seed,
              episodeSeconds: seconds,
              calibration,
              placementSigma: world?.placement,
              look: world?.look,
              signal: io.signal,
              recording: recorder,
            });
          } finally {
            recorded = await recorder.close({
              outcome: result?.episode.outcome ?? 'not-run',
              status: result?.episode.status ?? 'not-run',
            });
          }
        } catch (e) {
          rmSync(partial, { force: true });
          if (isDiskFull((e as Error).message)) {
            stop = {
              code: 3,
              sentence: `The disk is full: ${kept} of ${episodes} episodes are kept in ${out}; free some space and run the same command again to carry on.`,
            };
            break;
          }
          if (e instanceof RecordingError) throw new UserError(e.message);
          throw e;
        }
        if (recorded.status !== 'finished') {
          rmSync(partial, { force: true });
          if (isDiskFull(recorded.failure)) {
            stop = {
              code: 3,
              sentence: `The disk is full: ${kept} of ${episodes} episodes are kept in ${out}; free some space and run the same command again to carry on.`,
            };
            break;
          }
          throw new UserError(
            `Attempt ${attempt}'s episode file could not be written (${recorded.failure ?? 'unfinished'}); nothing of it was kept — fix that and run the same command again.`,
          );
        }
        if (io.signal.aborted && result.episode.status !== 'valid') {
          rmSync(partial, { force: true });
          continue; // the loop's check says stopped; this attempt is made again on resume
        }
        const e = result.episode;
        const verdict = judgeEpisode(
          { status: e.status, reason: e.reason, error: e.error, progress: e.progress?.progress },
          rule,
        );
        const file = verdict.kept ? `${name}.mcap` : undefined;
        if (file) renameSync(partial, join(episodesDir, file));
        else rmSync(partial, { force: true });
        appendAttempt(attemptsFile, {
          attempt,
          layoutIndex: at.layoutIndex,
          seed: at.seed,
          kept: verdict.kept,
          ...(verdict.reason ? { reason: verdict.reason } : {}),
          progress: e.progress?.progress ?? null,
          ...(file ? { file } : {}),
        });
        if (verdict.kept) kept += 1;
        else tally(verdict.reason!);
        if (!args.values.json)
          io.err(
            `attempt ${attempt} (layout ${at.layoutIndex}, seed ${at.seed}): ${verdict.kept ? 'kept' : `rejected, ${verdict.reason}`} — ${kept}/${episodes} kept\n`,
          );
        attempt += 1;
      }
    } finally {
      await policy.close?.();
    }
    const all = readAttempts(attemptsFile);
    const summary = { out, kept, episodes, attempts: all.length, rejected: Object.fromEntries(rejected) };
    if (stop) {
      if (args.values.json) io.out(`${JSON.stringify({ ...summary, stopped: stop.sentence })}\n`);
      throw new UserError(stop.sentence, stop.code);
    }
    // The dataset is derived from the kept files: rebuilt whole each time the set grows.
    const datasetDir = join(out, 'lerobot');
    rmSync(datasetDir, { recursive: true, force: true });
    rmSync(`${datasetDir}.partial`, { recursive: true, force: true });
    const files = all.filter((a) => a.kept && a.file).map((a) => join(episodesDir, a.file!));
    let report;
    try {
      report = await exportLeRobot({ episodes: files, out: datasetDir, fps, signal: io.signal });
    } catch (e) {
      if (e instanceof ExportError)
        throw new UserError(
          `The ${kept} episodes are kept in ${episodesDir}, but the dataset could not be written: ${e.message}`,
          isDiskFull(e.message) ? 3 : 2,
        );
      throw e;
    }
    if (args.values.json)
      io.out(`${JSON.stringify({ ...summary, dataset: datasetDir, frames: report.totalFrames, fps })}\n`);
    else
      io.out(
        `${kept} episodes kept of ${all.length} attempts${rejected.size ? ` (rejected: ${[...rejected].map(([r, n]) => `${n} × ${r}`).join('; ')})` : ''}; LeRobot v3.0 dataset ${datasetDir}: ${report.totalFrames} frames at ${fps} fps.\n`,
      );
    return 0;
  },
};

export const commands: CliCommand[] = [generate];
