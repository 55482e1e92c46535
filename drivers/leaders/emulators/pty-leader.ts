/**
 * Emulated leader arms served on socat ptys, one per arm: the YAM leader (its six motors moved by
 * the operator's hand, and the teaching handle) behind an emulated SLCAN or Damiao USB-CAN adapter,
 * or a GELLO's Dynamixel chain on its USB serial line. Another process opens the ptys with the real
 * leader driver exactly as it opens the hardware (`tandem teleop record --leader yam:PTY`), so the
 * whole leader path is rehearsed byte for byte. The hand starts when a host first talks to it.
 */
import { ARM_SIDES, type ArmSide } from '../../../src/rig/contract.js';
import type { CanTransport } from '../../can/bus.js';
import { PtyEmulator } from '../../emulators/pty.js';
import { PtyLink } from '../../emulators/pty-link.js';
import { createGelloChains, type GelloChainEmulator } from './gello-emulator.js';
import { createYamLeaderArms, leaderGarbage, type YamLeaderBusEmulator } from './yam-leader-emulator.js';
import type { HandMotion } from './operator-hand.js';

export const LEADER_EMULATOR_KINDS = ['yam', 'gello'] as const;
export type LeaderEmulatorKind = (typeof LEADER_EMULATOR_KINDS)[number];

export interface PtyLeaderOptions {
  readonly kind: LeaderEmulatorKind;
  /** The YAM leader's adapter framing (default slcan); GELLO has none. */
  readonly transport?: CanTransport;
  /** One pty path per arm, left first. */
  readonly links: readonly string[];
  readonly hand?: HandMotion;
  /** The socat executable. */
  readonly socat?: string;
}

/** A fault typed at the emulator, for one arm or all. */
export type PtyLeaderFault = 'silence' | 'recover' | 'garbage' | 'unplug' | 'replug' | { readonly crcErrors: number };

export interface PtyLeader {
  readonly kind: LeaderEmulatorKind;
  readonly links: Partial<Record<ArmSide, string>>;
  /** Frames (YAM) or packets (GELLO) the leader has answered, per arm. */
  answered(): Partial<Record<ArmSide, number>>;
  inject(fault: PtyLeaderFault, arms?: readonly ArmSide[]): Promise<void>;
  stop(): Promise<void>;
}

const wallNowS = (): number => performance.now() / 1000;

/** Serves the leader; rejects with one sentence (the link exists, its folder does not, no socat). */
export async function serveLeaderOnPtys(o: PtyLeaderOptions): Promise<PtyLeader> {
  if (o.links.length < 1 || o.links.length > 2)
    throw new Error('A leader has one or two arms: give one pty path per arm, left first.');
  const sides = ARM_SIDES.slice(0, o.links.length);
  const links = Object.fromEntries(sides.map((s, i) => [s, o.links[i]])) as Partial<Record<ArmSide, string>>;
  return o.kind === 'yam' ? serveYam(o, sides, links) : serveGello(o, sides, links);
}

async function startEach<T extends { stop(): Promise<void> }>(
  sides: readonly ArmSide[],
  start: (side: ArmSide) => Promise<T>,
): Promise<Partial<Record<ArmSide, T>>> {
  const started: Partial<Record<ArmSide, T>> = {};
  try {
    for (const side of sides) started[side] = await start(side);
  } catch (e) {
    for (const s of Object.values(started)) await s!.stop();
    throw e;
  }
  return started;
}

async function serveYam(
  o: PtyLeaderOptions,
  sides: readonly ArmSide[],
  links: Partial<Record<ArmSide, string>>,
): Promise<PtyLeader> {
  const transport = o.transport ?? 'slcan';
  const arms = createYamLeaderArms({ nowS: wallNowS, arms: sides, hand: o.hand });
  const buses = arms.buses as Partial<Record<ArmSide, YamLeaderBusEmulator>>;
  const ptys = await startEach(sides, (side) =>
    PtyEmulator.start({ transport, link: links[side]!, bus: buses[side]!, ...(o.socat ? { socat: o.socat } : {}) }),
  );
  return {
    kind: 'yam',
    links,
    answered: () => Object.fromEntries(sides.map((s) => [s, buses[s]!.framesReceived])),
    async inject(fault, which = sides) {
      for (const side of which) {
        const bus = buses[side];
        const pty = ptys[side];
        if (!bus || !pty) continue;
        if (fault === 'silence') bus.silent = true;
        else if (fault === 'recover') bus.silent = false;
        else if (fault === 'garbage') pty.adapter.injectGarbage(leaderGarbage());
        else if (fault === 'unplug') await pty.unplug();
        else if (fault === 'replug') await pty.replug();
        else throw new Error('CRC errors are a Dynamixel fault; the YAM leader speaks CAN.');
      }
    },
    async stop() {
      for (const pty of Object.values(ptys)) await pty!.stop();
    },
  };
}

async function serveGello(
  o: PtyLeaderOptions,
  sides: readonly ArmSide[],
  links: Partial<Record<ArmSide, string>>,
): Promise<PtyLeader> {
  const chains = createGelloChains({ nowS: wallNowS, arms: sides, hand: o.hand }).chains as Partial<
    Record<ArmSide, GelloChainEmulator>
  >;
  const ptys = await startEach(sides, (side) =>
    PtyLink.start({ link: links[side]!, ...(o.socat ? { socat: o.socat } : {}) }, chains[side]!),
  );
  return {
    kind: 'gello',
    links,
    answered: () => Object.fromEntries(sides.map((s) => [s, chains[s]!.syncReads])),
    async inject(fault, which = sides) {
      for (const side of which) {
        const chain = chains[side];
        const pty = ptys[side];
        if (!chain || !pty) continue;
        if (fault === 'silence' || fault === 'recover' || fault === 'garbage') chain.inject({ kind: fault });
        else if (fault === 'unplug') await pty.unplug();
        else if (fault === 'replug') await pty.replug();
        else chain.inject({ kind: 'crc-errors', packets: fault.crcErrors });
      }
    },
    async stop() {
      for (const pty of Object.values(ptys)) await pty!.stop();
    },
  };
}
