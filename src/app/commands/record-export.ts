/**
 * tandem record export --format lerobot --out DIR EPISODES…   episode files → a LeRobot v3.0 dataset
 */
import { resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand } from '../command.js';
import type { VideoCodec } from '../../record/video-encoder.js';

const CODECS: readonly VideoCodec[] = ['av1', 'h264'];

export const exportCommand: CliCommand = {
  path: ['record', 'export'],
  summary: 'episode files → a LeRobot v3.0 dataset (parquet + one mp4 per camera) for fine-tuning',
  help: `Usage: tandem record export --format lerobot --out DIR [options] EPISODE.mcap…

Writes one LeRobot v3.0 dataset from the episode files, in the order given (episode 0, 1, …):
meta/info.json, meta/stats.json, meta/tasks.parquet, meta/episodes/…, data/… and one mp4 per
camera (ffmpeg). Each frame holds observation.state (the measured joints), action (the command
the rig applied) and each camera's image, all the newest at or before the frame's tick. A tick
whose newest sample is stale (camera older than 1.5 frame periods, joints older than 2 control
periods) repeats it and is counted; a stream silent for longer than --max-gap-s ends its episode
there. The task is the episode's prompt (metadata 'prompt', else 'task', else --task).
DIR must not exist or be empty; the dataset is built in DIR.partial and renamed when complete.
  --format lerobot     the dataset format (LeRobot v3.0 is the one there is)
  --out DIR            the dataset folder to create
  --fps N              dataset frames per second (default 30)
  --task TEXT          the task for episodes whose metadata names none
  --robot-type NAME    info.json robot_type (default from the metadata)
  --codec av1|h264     video codec (default av1 via libsvtav1, as LeRobot writes)
  --max-gap-s S        longest silence of a stream before its episode ends (default 0.25)
  --ffmpeg PATH        the ffmpeg to encode with (default ffmpeg on PATH)
  --json               print the report as JSON`,
  options: {
    format: { type: 'string' },
    out: { type: 'string', short: 'o' },
    fps: { type: 'string' },
    task: { type: 'string' },
    'robot-type': { type: 'string' },
    codec: { type: 'string' },
    'max-gap-s': { type: 'string' },
    ffmpeg: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: [1, 100_000],
  async run(args, io) {
    const format = requireString(args, 'format');
    if (format !== 'lerobot')
      throw new UserError(
        `--format ${format} is not one tandem writes; the export format is lerobot (LeRobot dataset v3.0).`,
      );
    const out = resolve(io.cwd, requireString(args, 'out'));
    const codec = (args.values.codec ?? 'av1') as VideoCodec;
    if (!CODECS.includes(codec))
      throw new UserError(`--codec must be ${CODECS.join(' or ')}, not '${String(args.values.codec)}'.`);
    const str = (name: string): string | undefined =>
      typeof args.values[name] === 'string' ? (args.values[name] as string) : undefined;
    // Loaded here, not at startup: every other tandem command stays free of sharp and the parquet writer.
    const { exportLeRobot, ExportError } = await import('../../record/lerobot-export.js');
    let report;
    try {
      report = await exportLeRobot({
        episodes: args.positionals.map((p) => resolve(io.cwd, p)),
        out,
        fps: intOption(args, 'fps', 30, 1, 1000),
        task: str('task'),
        robotType: str('robot-type'),
        codec,
        maxGapS: numberOption(args, 'max-gap-s', 0.25, 0.001, 3600),
        ffmpeg: str('ffmpeg'),
        signal: io.signal,
        onProgress: args.values.json ? undefined : (line) => io.out(`${line}\n`),
      });
    } catch (e) {
      if (e instanceof ExportError) throw new UserError(e.message);
      throw e;
    }
    if (args.values.json) {
      io.out(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    for (const s of report.skipped) io.out(`skipped ${s.file}: ${s.reason}\n`);
    const cams =
      report.cameras.length === 0 ? 'no cameras' : `${report.cameras.length} camera videos (${report.codec})`;
    io.out(
      `Wrote ${report.out}: LeRobot v3.0, ${report.episodes.length} episodes, ${report.totalFrames} frames at ${report.fps} fps, ${report.tasks.length} tasks, ${cams}.\n`,
    );
    return 0;
  },
};
