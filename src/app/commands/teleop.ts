/**
 * tandem teleop record — record teleoperated episodes: a leader (YAM + teaching handle, GELLO, or
 * their emulators) drives the follower rig (default: the emulated cell) through the 250 Hz loop;
 * one MCAP per kept episode, one teleop session in the store, --resume continues a stopped one.
 */
import { resolve } from 'node:path';
import { intOption, numberOption, requireString, UserError, type CliCommand, type CliIo } from '../command.js';
import { MAX_CONTROL_RATE_HZ } from '../../rig/control-loop.js';
import { openCommandStore } from '../station-store.js';
import { readLayoutSetFile } from './layouts.js';
import { leaderSpecOf, rigConfigWithGrippers, stationConfigFromArgs } from '../station-config.js';
import { DEFAULT_MAX_ENGAGE_GAP_RAD, DEFAULT_RAMP_S } from '../../teleop/follow.js';
import { DEFAULT_RESET_SECONDS, recordTeleop, type TeleopRecordOptions } from '../teleop-recording.js';
import { teleopCamerasOf } from '../teleop-cameras.js';

const HELP = `Usage: tandem teleop record --leader LEADER --task TASK --out DIR [options]

A leader drives the follower through the 250 Hz control loop and its safety supervisor; each take
is one MCAP episode file in DIR (a discarded take is moved to DIR/discarded, never deleted), and
the session is one teleop session in the store. Sync engages at the start (the follower ramps to
the leader over 3 s, or refuses if they are too far apart); between takes a reset period counts down.
Keys (the terminal in raw mode, so it works over SSH): Space/Enter/→ start now or end early,
←/D discard and re-record, E engage/release sync, Q/Esc stop (resume with --resume). Handle
buttons: top = sync, second = next, second held ≥ 0.8 s = discard. A foot pedal (--pedal) sends
the same as keys: A/← discard, B/→/Space next, C sync.
  --leader L          emulated-yam | emulated-gello | yam:PORT[,PORT] (SLCAN adapters; yam:damiao:PORT[,PORT] for
                      Damiao USB-CAN) | gello:PORT[,PORT] (one port per arm, left first; 'tandem leader emulate'
                      serves an emulated one on ptys)
  --follower F        cell (the emulated cell, default) or a rig config file (JSON, e.g. {"type": "yam-can", …})
  --station-config FILE  the station config (docs/station-config.md): its rig is the follower, its cameras
                      are recorded, its leader is the default --leader; an emulated leader is refused
                      on real arms
  --gap seed:N|none   the emulated cell's hidden reality gap (default seed:0)
  --cameras C         none | cell (the emulated cell's three) | testsrc:N | v4l2:/dev/videoN,… (default none)
  --camera-fps F      camera frame rate (default 10)
  --task TASK         a task id (its prompt is recorded) or the prompt itself, e.g. "put the cup on the plate"
  --episodes N        episodes to keep (default 10)
  --seconds S         take length (default the task's, else 30)
  --reset S           reset period between takes (default ${DEFAULT_RESET_SECONDS})
  --out DIR           where the episode files go
  --layouts FILE --layout I   put this layout on the emulated cell's table (and record which it was;
                      \`tandem sysid fit --layouts FILE\` replays it and fits the objects' mass on the takes)
  --empty-table       nothing on the emulated cell's table (takes for \`tandem sysid fit\`)
  --resume            continue the stopped session recording into DIR at its next episode
  --bilateral G       bilateral feedback: the leader pulled toward the follower with kp × G (0.1–0.2)
  --ramp-s S          engage ramp (default ${DEFAULT_RAMP_S}); --max-gap-rad R refuses beyond (default ${DEFAULT_MAX_ENGAGE_GAP_RAD})
  --trajectory FILE   an emulated leader replays this joint trajectory (JSON) instead of its scripted motion
  --pedal PATH        a foot pedal's evdev node (/dev/input/eventN, or /dev/input/by-id/…-event-kbd)
  --rate HZ           control rate (default 250)
  --json              print the summary as JSON`;

export const teleopRecordCommand: CliCommand = {
  path: ['teleop', 'record'],
  summary:
    'record teleoperated episodes: a leader arm drives the follower, one MCAP per kept take, a teleop session in the store',
  help: HELP,
  options: {
    leader: { type: 'string' },
    follower: { type: 'string' },
    'station-config': { type: 'string' },
    gap: { type: 'string' },
    cameras: { type: 'string' },
    'camera-fps': { type: 'string' },
    task: { type: 'string' },
    episodes: { type: 'string' },
    seconds: { type: 'string' },
    reset: { type: 'string' },
    out: { type: 'string', short: 'o' },
    layouts: { type: 'string' },
    layout: { type: 'string' },
    'empty-table': { type: 'boolean' },
    resume: { type: 'boolean' },
    bilateral: { type: 'string' },
    'ramp-s': { type: 'string' },
    'max-gap-rad': { type: 'string' },
    trajectory: { type: 'string' },
    pedal: { type: 'string' },
    rate: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args, io: CliIo) {
    const str = (name: string): string | undefined =>
      typeof args.values[name] === 'string' ? (args.values[name] as string) : undefined;
    const station =
      typeof args.values['station-config'] === 'string' ? await stationConfigFromArgs(args.values, io.cwd) : undefined;
    if (station && (str('follower') !== undefined || str('cameras') !== undefined))
      throw new UserError('--station-config names the follower and the cameras; leave out --follower and --cameras.');
    const leader = str('leader') ?? (station?.leader ? leaderSpecOf(station.leader) : requireString(args, 'leader'));
    const outDir = resolve(io.cwd, requireString(args, 'out'));
    const resume = args.values.resume === true;
    const task = resume ? (str('task') ?? '') : requireString(args, 'task');
    let layout: TeleopRecordOptions['layout'];
    if (str('layouts') !== undefined)
      layout = {
        set: readLayoutSetFile(io, str('layouts')!).set,
        index: intOption(args, 'layout', undefined, 0, 1_000_000),
      };
    const opt = (name: string, lo: number, hi: number): number | undefined =>
      args.values[name] === undefined ? undefined : numberOption(args, name, undefined, lo, hi);
    const store = openCommandStore(args.values, io);
    const stdin = process.stdin;
    try {
      const { sessionId, session } = await recordTeleop({
        store,
        outDir,
        leader,
        follower: station
          ? station.source
          : str('follower') === undefined || str('follower') === 'cell'
            ? 'cell'
            : resolve(io.cwd, str('follower')!),
        ...(station ? { station: { ...station, rig: rigConfigWithGrippers(station, store) } } : {}),
        gap: str('gap'),
        cameras: teleopCamerasOf(station, str('cameras') ?? 'none'),
        cameraFps: opt('camera-fps', 1, 60),
        task,
        episodes: args.values.episodes === undefined ? undefined : intOption(args, 'episodes', undefined, 1, 100_000),
        seconds: opt('seconds', 0.5, 3600),
        resetSeconds: opt('reset', 0, 3600),
        resume,
        layout,
        emptyTable: args.values['empty-table'] === true,
        rateHz: opt('rate', 10, MAX_CONTROL_RATE_HZ),
        rampS: opt('ramp-s', 0.5, 30),
        maxEngageGapRad: opt('max-gap-rad', 0.05, 2),
        bilateralGain: opt('bilateral', 0.05, 0.3),
        trajectory: str('trajectory') ? resolve(io.cwd, str('trajectory')!) : undefined,
        keyboard: stdin,
        pedal: str('pedal'),
        log: (line) => io.err(`${line}\n`),
        signal: io.signal,
      });
      const summary = {
        sessionId,
        end: session.end,
        problem: session.problem ?? null,
        kept: session.kept.map((k) => ({
          episode: k.episodeIndex,
          file: k.file,
          marks: k.marks,
          messages: k.summary.messages,
        })),
        discarded: session.discarded.map((d) => ({ episode: d.episodeIndex, file: d.movedTo, reason: d.reason })),
        nextEpisode: session.nextEpisode,
        loopHz: Math.round(session.loop.achievedHz),
        safetyEvents: session.safetyEvents,
      };
      if (args.values.json) io.out(`${JSON.stringify(summary)}\n`);
      else {
        io.out(
          `Teleop session ${sessionId}: ${session.kept.length} episode${session.kept.length === 1 ? '' : 's'} kept, ${session.discarded.length} discarded` +
            (session.end === 'done'
              ? '; done.\n'
              : `; stopped at episode ${session.nextEpisode + 1} — continue with --resume.\n`) +
            session.kept
              .map((k) => `  ${k.file}${k.marks.length ? `  (marked: ${k.marks.join('; ')})` : ''}\n`)
              .join('') +
            (session.problem ? `${session.problem}\n` : ''),
        );
      }
      return session.end === 'done' ? 0 : session.end === 'interrupted' || session.end === 'operator' ? 130 : 1;
    } finally {
      if (stdin.isTTY) stdin.setRawMode?.(false);
      stdin.pause();
      store.close();
    }
  },
};

export const commands: readonly CliCommand[] = [teleopRecordCommand];
