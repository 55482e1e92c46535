/**
 * Episode files from the command line:
 *   tandem record inspect FILE [--json]   topics, counts, rates, gaps, cameras, metadata
 *   tandem record recover FILE [-o OUT]   a cut-off file's readable prefix as a finished file
 *   tandem record export --format lerobot --out DIR EPISODES…   (record-export.ts)
 */
import { basename, dirname, join, resolve } from 'node:path';
import { UserError, type CliCommand, type CliIo } from '../command.js';
import { EpisodeFileError } from '../../record/episode-file-reader.js';
import { RecordingError } from '../../record/episode-recorder.js';
import { inspectEpisodeFile, type InspectReport } from '../../record/inspect.js';
import { recoverEpisodeFile } from '../../record/recover.js';
import { existsSync } from 'node:fs';
import { resolveDataDir } from '../data-dir.js';
import { storePath, withCommandStore } from '../station-store.js';
import { exportCommand } from './record-export.js';

/** Episode-file errors are the operator's to act on: one sentence, exit 2. */
async function asUserError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof EpisodeFileError || e instanceof RecordingError) throw new UserError(e.message);
    throw e;
  }
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits);

function printInspect(r: InspectReport, io: CliIo): void {
  const line = (text: string): void => io.out(`${text}\n`);
  line(
    `${r.file}: ${(r.fileBytes / 1048576).toFixed(1)} MiB, ${r.messages} messages over ${fmt(r.durationS, 2)} s, ${r.profile || 'no'} profile${r.complete ? '' : ' — UNFINISHED'}`,
  );
  if (!r.complete) line(`  This file is cut off: ${r.problem}. Recover it with: tandem record recover ${r.file}`);
  const width = Math.max(5, ...r.topics.map((t) => t.topic.length));
  line(`  ${'topic'.padEnd(width)}  ${'messages'.padStart(8)}  ${'rate Hz'.padStart(8)}  gaps > 2 periods`);
  for (const t of r.topics) {
    const gaps =
      t.gapCount === 0
        ? 'none'
        : `${t.gapCount} (longest ${fmt(Math.max(...t.gaps.map((g) => g.gapS)) * 1000, 0)} ms at ${fmt(t.gaps.reduce((a, g) => (g.gapS > a.gapS ? g : a)).atS, 2)} s)`;
    line(`  ${t.topic.padEnd(width)}  ${String(t.count).padStart(8)}  ${fmt(t.rateHz).padStart(8)}  ${gaps}`);
  }
  for (const c of r.cameras) {
    const dropped =
      c.dropped === undefined ? 'dropped: unknown (no end record)' : `dropped ${c.dropped}, late ${c.late ?? 0}`;
    line(
      `  camera ${c.camera}: ${c.frames} frames, ${dropped}${c.lost ? `; LOST at ${fmt(c.lost.atS, 2)} s: ${c.lost.reason}` : ''}`,
    );
  }
  const events = Object.entries(r.eventsByKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  line(`  events: ${events || 'none'}`);
  for (const [name, fields] of Object.entries(r.metadata)) {
    line(`  ${name}:`);
    for (const [k, v] of Object.entries(fields)) line(`    ${k}: ${v.length > 160 ? `${v.slice(0, 157)}...` : v}`);
  }
}

const inspect: CliCommand = {
  path: ['record', 'inspect'],
  summary: 'what an episode file holds: topics, rates, gaps, dropped camera frames, metadata',
  help: `Usage: tandem record inspect FILE [--json]

Reads the whole file in one pass (a cut-off file as far as it reads, and says so): every topic's
message count, rate and gaps longer than two periods; per camera the frames recorded, the frames
the camera dropped and when it was lost; the event counts; the episode's metadata records.
  --json   print every number as JSON`,
  options: { json: { type: 'boolean' } },
  positionals: [1, 1],
  async run(args, io) {
    const file = resolve(io.cwd, args.positionals[0]);
    const report = await asUserError(() => inspectEpisodeFile(file));
    if (args.values.json) io.out(`${JSON.stringify(report, null, 2)}\n`);
    else printInspect(report, io);
    return report.complete ? 0 : 1;
  },
};

const recover: CliCommand = {
  path: ['record', 'recover'],
  summary: "rewrite a cut-off episode file's readable prefix into a finished file",
  help: `Usage: tandem record recover FILE [-o OUT] [--json]

An episode file cut off mid-write (the station killed, the power lost, the disk full) keeps every
chunk closed before the cut — at most the last second is missing. This writes that readable
prefix into OUT (default FILE with .recovered.mcap), finished with indexes and statistics, and
says what it kept. FILE itself is never changed; OUT is never overwritten. When the station
store (--data) knows FILE, its recording is marked recovered, with OUT.
  -o, --out OUT   the finished file to write
  --json          print the report as JSON`,
  options: { out: { type: 'string', short: 'o' }, json: { type: 'boolean' } },
  positionals: [1, 1],
  async run(args, io) {
    const file = resolve(io.cwd, args.positionals[0]);
    const out =
      typeof args.values.out === 'string'
        ? resolve(io.cwd, args.values.out)
        : join(dirname(file), `${basename(file).replace(/\.mcap$/i, '')}.recovered.mcap`);
    const r = await asUserError(() => recoverEpisodeFile(file, out));
    // Only a store that exists already: recovering a file copied from elsewhere makes no store.
    const dataDir = resolveDataDir(typeof args.values.data === 'string' ? args.values.data : undefined, io.env, io.cwd);
    let marked = false;
    if (r.output && existsSync(storePath(dataDir))) {
      marked = await withCommandStore(args.values, io, (store) => {
        const rec = store.findRecordingByFile(file);
        if (!rec) return false;
        store.endRecording(rec.id, {
          state: 'recovered',
          recoveredFile: r.output,
          problem: r.problem ?? null,
          messages: r.keptMessages,
          durationS: r.keptSeconds,
          bytes: r.outputBytes,
        });
        return true;
      });
    }
    if (args.values.json) {
      io.out(`${JSON.stringify({ ...r, storeMarked: marked }, null, 2)}\n`);
      return 0;
    }
    if (r.alreadyComplete) {
      io.out(`${file} is finished already (it has its summary and footer): nothing to recover.\n`);
      return 0;
    }
    const topics = Object.entries(r.keptByTopic)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ');
    io.out(
      `Recovered ${r.keptMessages} messages (${fmt(r.keptSeconds, 2)} s) into ${r.output}: ${topics || 'no messages'}.\n`,
    );
    io.out(`The input stopped being readable because ${r.problem}.\n`);
    if (marked) io.out(`The station store now lists it as recovered.\n`);
    return 0;
  },
};

export const commands: readonly CliCommand[] = [inspect, recover, exportCommand];
