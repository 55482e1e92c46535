/**
 * The emulated cell, put together: a cell world with a layout on its table, the two YAM bus
 * emulators whose motors move its arms, and the station's unchanged YamCanRig talking to them —
 * SLCAN or Damiao USB-CAN bytes through the in-process serialport binding (createEmulatedCell) or
 * over socat ptys for any other program (serveCellOnPtys). The rig cannot tell it from hardware;
 * what the cell adds beside it (its end state, object poses, its own faults) is handed to the
 * composition root, never to the rollout loop.
 */
import { join } from 'node:path';
import { ARM_SIDES, type ArmSide, type Clock, type RigFault, type RigModel } from '../rig/contract.js';
import { yamRigModel } from '../rig/yam.js';
import type { SafetyOptions } from '../rig/safety.js';
import { MODEL_EXACT_FEED_FORWARD, type FeedForwardSettings } from '../rig/gravity.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import type { CanTransport } from '../../drivers/can/bus.js';
import { createEmulatedYam, type EmulatedYam } from '../../drivers/emulators/in-process.js';
import { PtyEmulator } from '../../drivers/emulators/pty.js';
import type { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';
import type { YamCanRig } from '../../drivers/yam/yam-can-rig.js';
import { cellTruth, type CellGap, type HashedCellTruth } from './cell-truth.js';
import { CellWorld, type CellWorldView } from './cell-world.js';

export interface EmulatedCellOptions {
  readonly task: TaskDefinition;
  readonly layout: Layout;
  readonly gap: CellGap;
  /** Seeds the scripted operator's placement noise. Default 0. */
  readonly placementSeed?: number;
  readonly rigModel?: RigModel;
}

/** The cell's inputs beside its motors: what the cell I/O work wires to a PLC. */
export class CellInputs {
  interlockOpen = false;
  private estopPressed = false;
  private readonly estopListeners = new Set<(pressed: boolean) => void>();

  get estop(): boolean {
    return this.estopPressed;
  }

  /** The cell's e-stop button; listeners (the station's e-stop path) hear every change. */
  setEstop(pressed: boolean): void {
    if (pressed === this.estopPressed) return;
    this.estopPressed = pressed;
    for (const l of this.estopListeners) l(pressed);
  }

  onEstop(listener: (pressed: boolean) => void): () => void {
    this.estopListeners.add(listener);
    return () => this.estopListeners.delete(listener);
  }

  faults(): readonly RigFault[] {
    if (!this.interlockOpen) return NONE;
    return [
      {
        kind: 'interlock',
        message:
          "The cell's interlock is open (door or light curtain); the arms were damped. Close it, then activate the rig again.",
      },
    ];
  }
}

const NONE: readonly RigFault[] = [];

/** A world and its inputs: what the cell is, whichever way its motors are reached. */
export interface CellCore {
  readonly world: CellWorld;
  readonly truth: HashedCellTruth;
  readonly inputs: CellInputs;
  readonly task: TaskDefinition;
  readonly layout: Layout;
  /** Every fault the cell itself raises (world behind real time, interlock). */
  faults(): readonly RigFault[];
}

async function createCore(opts: EmulatedCellOptions, clock?: Clock): Promise<CellCore> {
  const truth = cellTruth(opts.gap);
  const world = await CellWorld.create({
    rigModel: opts.rigModel ?? yamRigModel(),
    task: opts.task,
    layout: opts.layout,
    truth,
    placementSeed: opts.placementSeed ?? 0,
    // The world, the motors and the rig read one clock: the wall clock's, or virtual time in tests.
    ...(clock ? { nowS: () => clock.nowS(), timePassesByItself: clock.passesWhileAwaiting !== false } : {}),
  });
  const inputs = new CellInputs();
  return {
    world,
    truth,
    inputs,
    task: opts.task,
    layout: opts.layout,
    faults: () => {
      const a = world.faults();
      const b = inputs.faults();
      return a.length === 0 ? b : b.length === 0 ? a : [...a, ...b];
    },
  };
}

/**
 * What the composition root may see of the cell a rig runs on, whichever thread its world is in:
 * its table, its hidden truth's hash, how its world keeps up.
 */
export interface CellOfRig {
  readonly world: CellWorldView;
  readonly truth: HashedCellTruth;
  readonly task: TaskDefinition;
  readonly layout: Layout;
}

export interface EmulatedCell extends CellCore {
  readonly rig: YamCanRig;
  readonly emulated: EmulatedYam;
  bus(side: ArmSide): YamBusEmulator;
  /** Stops the world and closes the rig's buses. */
  close(): Promise<void>;
}

export interface EmulatedCellRigOptions extends EmulatedCellOptions {
  readonly transport?: CanTransport;
  readonly clock?: Clock;
  readonly safety?: SafetyOptions;
  readonly replyDeadlineMs?: number;
  /** The rig's torque feed-forward; default plain gravity, as the sim twin sends (the cell's arms weigh what the model says). `false`: none. */
  readonly feedForward?: FeedForwardSettings | false;
}

/** The cell with the station's YamCanRig on it, through the in-process serialport binding. */
export async function createEmulatedCell(opts: EmulatedCellRigOptions): Promise<EmulatedCell> {
  const core = await createCore(opts, opts.clock);
  const { world, truth } = core;
  const emulated = createEmulatedYam({
    transport: opts.transport ?? 'slcan',
    replyLatencyMs: truth.truth.replyLatencyMs,
    emulator: { plant: world },
    clock: opts.clock,
    safety: opts.safety,
    rig: {
      model: opts.rigModel,
      replyDeadlineMs: opts.replyDeadlineMs,
      externalFaults: core.faults,
      feedForward: opts.feedForward ?? MODEL_EXACT_FEED_FORWARD,
      onClose: () => world.free(),
    },
  });
  // The world's wall clock starts when the rig first speaks to a motor (CellWorld.advanceTo).
  for (const side of ARM_SIDES) world.attach(side, emulated.devices[side]!.bus);
  return {
    ...core,
    rig: emulated.rig,
    emulated,
    bus: (side) => emulated.devices[side]!.bus,
    close: () => emulated.rig.close(),
  };
}

export interface PtyCell extends CellCore {
  readonly emulators: Record<ArmSide, PtyEmulator>;
  /** The paths a host opens, per arm. */
  readonly links: Record<ArmSide, string>;
  stop(): Promise<void>;
}

/**
 * The cell served on two socat ptys, DIR/yam-left and DIR/yam-right, for any host program:
 * `tandem rig probe`, `tandem rig hold`, a yam-can rig config pointing at them. The cell's own
 * faults cannot reach a host over a pty (a real cell's would come over its I/O): it prints them.
 */
export async function serveCellOnPtys(
  opts: EmulatedCellOptions & { transport: CanTransport; dir: string },
): Promise<PtyCell> {
  const core = await createCore(opts);
  const { world, truth } = core;
  const emulators: Partial<Record<ArmSide, PtyEmulator>> = {};
  const links = { left: join(opts.dir, 'yam-left'), right: join(opts.dir, 'yam-right') };
  try {
    for (const side of ARM_SIDES) {
      const emu = await PtyEmulator.start({
        transport: opts.transport,
        link: links[side],
        replyLatencyMs: truth.truth.replyLatencyMs,
        emulator: { plant: world },
      });
      emulators[side] = emu;
      world.attach(side, emu.bus);
    }
  } catch (e) {
    for (const emu of Object.values(emulators)) await emu.stop();
    world.free();
    throw e;
  }
  return {
    ...core,
    emulators: emulators as Record<ArmSide, PtyEmulator>,
    links,
    stop: async () => {
      for (const emu of Object.values(emulators)) await emu.stop();
      world.free();
    },
  };
}
