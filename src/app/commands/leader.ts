/**
 * tandem leader emulate — an emulated leader arm (the YAM leader with its teaching handle, or a
 * GELLO) on socat ptys, so `tandem teleop record --leader yam:PTY` (or the station) drives a
 * follower through the real leader driver, byte for byte, from another process.
 */
import { UserError, requireString, type CliCommand, type CliIo, type ParsedCommandArgs } from '../command.js';
import { ARM_SIDES, type ArmSide } from '../../rig/contract.js';
import {
  LEADER_EMULATOR_KINDS,
  serveLeaderOnPtys,
  type LeaderEmulatorKind,
  type PtyLeader,
  type PtyLeaderFault,
} from '../../../drivers/leaders/emulators/pty-leader.js';
import {
  readTrajectoryFile,
  scriptedMotion,
  TrajectoryFileError,
  type HandMotion,
} from '../../../drivers/leaders/emulators/operator-hand.js';
import { resolve } from 'node:path';
import { answerTypedCommands, transportOption } from './rig.js';

function kindOption(args: ParsedCommandArgs): LeaderEmulatorKind {
  const k = requireString(args, 'kind');
  if (!(LEADER_EMULATOR_KINDS as readonly string[]).includes(k))
    throw new UserError(
      `--kind must be yam (the YAM leader with its teaching handle) or gello (a GELLO on Dynamixel), not '${k}'.`,
    );
  return k as LeaderEmulatorKind;
}

function handOption(args: ParsedCommandArgs, io: CliIo): HandMotion {
  const file = args.values.trajectory;
  if (typeof file !== 'string') return scriptedMotion();
  try {
    return readTrajectoryFile(resolve(io.cwd, file));
  } catch (e) {
    if (e instanceof TrajectoryFileError) throw new UserError(e.message);
    throw e;
  }
}

/** How `tandem teleop record --leader` names this leader. */
function leaderSpec(kind: LeaderEmulatorKind, transport: string | undefined, links: readonly string[]): string {
  return `${kind}:${transport === 'damiao' ? 'damiao:' : ''}${links.join(',')}`;
}

const emulate: CliCommand = {
  path: ['leader', 'emulate'],
  summary:
    'Serve an emulated leader arm (YAM with its teaching handle, or GELLO) on socat ptys, for rehearsing teleop through the real leader driver',
  help: `Usage: tandem leader emulate --kind yam|gello --link PATH[,PATH] [--transport slcan|damiao] [--trajectory FILE]

Starts one socat pty pair per arm (left first) and answers on PATH as the leader's own adapter
would: for yam, an SLCAN or Damiao USB-CAN adapter with the six leader motors and the teaching
handle (CAN 0x50E/0x50F) behind it; for gello, the Dynamixel 2.0 chain (IDs 1-7) on its USB serial
line. An operator's hand moves it — a slow scripted motion eased in from the rest pose, or the
joint trajectory in FILE — starting when a host first talks to it. Then, from another shell:
  tandem teleop record --leader yam:PATH …            (yam:damiao:PATH with --transport damiao)
  tandem teleop record --leader gello:PATH …
Ctrl-C stops it and removes the ptys. Needs socat (Debian: apt-get install socat).

While it runs, type a fault and Enter (prefix left or right for one arm):
  silence / recover   the leader stops answering / answers again
  garbage             a burst of bytes that are no frame
  unplug / replug     the adapter disappears / comes back
  crc-errors N        (gello) the next N status packets carry a wrong CRC
  status              how many requests each arm answered

  --kind yam|gello           which leader
  --link PATH[,PATH]         where to put the pty of each arm, left first (the path must not exist yet)
  --transport slcan|damiao   the YAM leader's adapter framing (default slcan)
  --trajectory FILE          the hand replays this joint trajectory (the format of 'tandem teleop record --trajectory')`,
  options: {
    kind: { type: 'string' },
    link: { type: 'string' },
    transport: { type: 'string' },
    trajectory: { type: 'string' },
  },
  async run(args, io) {
    const kind = kindOption(args);
    const links = requireString(args, 'link')
      .split(',')
      .map((l) => l.trim());
    if (links.length > 2 || links.some((l) => l === ''))
      throw new UserError(
        `--link takes one pty path per arm, left first (at most two), e.g. /tmp/leader-left,/tmp/leader-right.`,
      );
    const transport = args.values.transport === undefined ? undefined : transportOption(args);
    if (kind === 'gello' && transport !== undefined)
      throw new UserError(
        "--transport is the YAM leader's CAN adapter framing; a GELLO speaks Dynamixel on its own serial line, so leave it out.",
      );
    const hand = handOption(args, io);
    let leader: PtyLeader;
    try {
      leader = await serveLeaderOnPtys({ kind, transport, links: links.map((l) => resolve(io.cwd, l)), hand });
    } catch (e) {
      throw new UserError((e as Error).message);
    }
    const served = Object.entries(leader.links) as [ArmSide, string][];
    const what =
      kind === 'yam' ? `YAM leader with its teaching handle (${transport ?? 'slcan'})` : 'GELLO leader (Dynamixel 2.0)';
    io.out(
      `Emulated ${what}: ${served.map(([s, l]) => `${s} arm on ${l}`).join(', ')}.\n` +
        `Try: tandem teleop record --leader ${leaderSpec(
          kind,
          transport,
          served.map(([, l]) => l),
        )} --task … --out …\nPress Ctrl-C to stop.\n`,
    );
    await answerTypedCommands(io, (line) => leaderCommand(leader, line));
    const answered = leader.answered();
    await leader.stop();
    io.out(
      `Stopped the leader emulator; ${served.map(([s]) => `${s} arm answered ${answered[s] ?? 0} ${kind === 'yam' ? 'frames' : 'sync reads'}`).join(', ')}.\n`,
    );
  },
};

/** One fault typed into `tandem leader emulate`; returns what to print. */
async function leaderCommand(leader: PtyLeader, line: string): Promise<string> {
  const words = line.split(/\s+/).filter((w) => w !== '');
  let arms: ArmSide[] | undefined;
  if ((ARM_SIDES as readonly string[]).includes(words[0] ?? '')) {
    const side = words.shift() as ArmSide;
    if (!leader.links[side]) throw new Error(`This leader has no ${side} arm.`);
    arms = [side];
  }
  const [word, n] = words;
  const who = arms ? `the ${arms[0]} arm` : 'the leader';
  let fault: PtyLeaderFault;
  switch (word) {
    case undefined:
      return '';
    case 'status':
      return Object.entries(leader.answered())
        .map(([s, k]) => `${s} arm: ${k} ${leader.kind === 'yam' ? 'frames' : 'sync reads'} answered`)
        .join('\n');
    case 'silence':
    case 'recover':
    case 'garbage':
    case 'unplug':
    case 'replug':
      fault = word;
      break;
    case 'crc-errors': {
      const packets = Number(n);
      if (leader.kind !== 'gello')
        throw new Error('crc-errors is a GELLO fault (Dynamixel packets carry a CRC); the YAM leader speaks CAN.');
      if (!Number.isInteger(packets) || packets < 1 || packets > 10_000)
        throw new Error('crc-errors needs a packet count from 1 to 10000, e.g. "crc-errors 50".');
      fault = { crcErrors: packets };
      break;
    }
    default:
      throw new Error(
        `Unknown leader emulator command '${word}'. Try: [left|right] silence, recover, garbage, unplug, replug${leader.kind === 'gello' ? ', crc-errors N' : ''}, status.`,
      );
  }
  await leader.inject(fault, arms);
  const said: Record<string, string> = {
    silence: 'is silent',
    recover: 'answers again',
    garbage: 'sent a burst of garbage bytes',
    unplug: 'is unplugged',
    replug: 'is plugged back in',
  };
  return typeof fault === 'string'
    ? `${who} ${said[fault]}`
    : `${who} sends the next ${fault.crcErrors} packets with a wrong CRC`;
}

export const commands: CliCommand[] = [emulate];
