/**
 * The emulated cell on the wall clock, as hardware is: its world and bus emulators run in the
 * cell's own thread (cell-thread-worker.ts), the station's YamCanRig with its supervisor and motor
 * loop in a rig thread (cell-rig-thread-worker.ts), the two joined by the adapters' bytes over
 * MessagePorts. The station's main thread holds a RigThreadProxy — the same Rig contract, the same
 * shared-memory command and state slots as the yam-can rig — and a SharedCellWorld for what it may
 * see of the table. A busy main thread slows neither the world nor the motors' commands; the
 * world's physics costs the main thread nothing.
 *
 * Virtual time stays in one thread (createEmulatedCell): there one clock steps the world, the
 * motors, the adapters and the driver from event to event, which threads cannot share without
 * making the order of events depend on scheduling.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import { ARM_SIDES, type ArmSide, type Clock, type CellInterlock, type RigModel } from '../rig/contract.js';
import { yamRigModel } from '../rig/yam.js';
import { DEFAULT_CONTROL_RATE_HZ } from '../rig/control-loop.js';
import { MODEL_EXACT_FEED_FORWARD, type FeedForwardSettings } from '../rig/gravity.js';
import { RigThreadProxy } from '../rig/rig-thread-proxy.js';
import type { CanTransport } from '../../drivers/can/bus.js';
import { cellTruth } from './cell-truth.js';
import { CellBehindWord, CellThreadMemory } from './cell-thread-memory.js';
import type { CellThreadInit, CellThreadMessage } from './cell-thread-worker.js';
import type { CellRigThreadInit } from './cell-rig-thread-worker.js';
import type { CellOfRig, EmulatedCellOptions } from './emulated-cell.js';
import { SharedCellWorld } from './shared-cell-world.js';

export interface ThreadedCellOptions extends EmulatedCellOptions {
  readonly transport: CanTransport;
  /** The station's clock (wall time): the rig's state and events are given on it. */
  readonly clock: Clock;
  readonly replyDeadlineMs?: number;
  readonly feedForward?: FeedForwardSettings | false;
  readonly interlock?: CellInterlock;
  /** The motor loop's rate in the rig thread. Default DEFAULT_CONTROL_RATE_HZ. */
  readonly rateHz?: number;
  /** Aborted when the station shuts down while the cell is still starting: the cell's thread is ended, nothing is left running. */
  readonly signal?: AbortSignal;
}

export interface ThreadedCell extends CellOfRig {
  readonly rig: RigThreadProxy;
  readonly world: SharedCellWorld;
  /** The cell's thread (for diagnostics and tests). */
  readonly thread: Worker;
}

function stoppedWhileStarting(): Error {
  return new Error('The station stopped while the emulated cell was starting; nothing moved.');
}

/** How long closing waits for the cell's thread to free its world before ending it. */
const CLOSE_GRACE_MS = 2000;

/**
 * Starts the cell's thread and the rig thread side by side (each loads its own modules, so
 * together they start in about the time of the slower one) and returns once the cell serves its
 * adapters; the rig comes back configured-but-closed.
 */
export async function createThreadedCell(opts: ThreadedCellOptions): Promise<ThreadedCell> {
  if (opts.signal?.aborted) throw stoppedWhileStarting();
  const model: RigModel = opts.rigModel ?? yamRigModel();
  const wires = Object.fromEntries(ARM_SIDES.map((side) => [side, new MessageChannel()])) as Record<
    ArmSide,
    MessageChannel
  >;
  const behind = new CellBehindWord();
  const cellInit: CellThreadInit = {
    taskId: opts.task.id,
    layout: opts.layout,
    gap: opts.gap,
    placementSeed: opts.placementSeed ?? 0,
    rigModel: model,
    transport: opts.transport,
    ports: { left: wires.left.port1, right: wires.right.port1 },
    behind: behind.buffer,
  };
  const thread = new Worker(new URL('./cell-thread-entry.mjs', import.meta.url), {
    workerData: cellInit,
    transferList: [wires.left.port1, wires.right.port1],
  });
  const stopCell = async (): Promise<void> => {
    let grace: ReturnType<typeof setTimeout> | undefined;
    const closed = new Promise<void>((resolve) => {
      thread.on('message', (m: CellThreadMessage) => {
        if ('closed' in m) resolve();
      });
      thread.once('exit', () => resolve());
    });
    thread.postMessage({ op: 'close' });
    await Promise.race([closed, new Promise<void>((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS)))]);
    clearTimeout(grace);
    await thread.terminate();
  };
  const rigInit: CellRigThreadInit = {
    model,
    transport: opts.transport,
    ...(opts.replyDeadlineMs !== undefined ? { replyDeadlineMs: opts.replyDeadlineMs } : {}),
    feedForward: opts.feedForward ?? MODEL_EXACT_FEED_FORWARD,
    ports: { left: wires.left.port2, right: wires.right.port2 },
    behind: behind.buffer,
  };
  let rig: RigThreadProxy;
  try {
    rig = new RigThreadProxy({
      model,
      entry: new URL('./cell-rig-thread-entry.mjs', import.meta.url),
      init: rigInit,
      rateHz: opts.rateHz ?? DEFAULT_CONTROL_RATE_HZ,
      clock: opts.clock,
      ...(opts.interlock ? { interlock: opts.interlock } : {}),
      transferList: [wires.left.port2, wires.right.port2],
      onClose: stopCell,
    });
  } catch (e) {
    await stopCell();
    throw e;
  }
  // Starting takes seconds on a busy machine (modules, physics): a station shutting down meanwhile ends both threads.
  let ready: Extract<CellThreadMessage, { ready: true }>;
  try {
    ready = await new Promise((resolve, reject) => {
      const onMessage = (m: CellThreadMessage): void => {
        if (!('ready' in m)) return;
        off();
        resolve(m);
      };
      const onError = (e: Error): void => {
        off();
        reject(new Error(`The emulated cell's thread did not start: ${e.message}`));
      };
      const onExit = (code: number): void => {
        off();
        reject(new Error(`The emulated cell's thread ended before it was ready (exit code ${code}).`));
      };
      const onAbort = (): void => {
        off();
        reject(stoppedWhileStarting());
      };
      const off = (): void => {
        thread.off('message', onMessage);
        thread.off('error', onError);
        thread.off('exit', onExit);
        opts.signal?.removeEventListener('abort', onAbort);
      };
      thread.on('message', onMessage);
      thread.on('error', onError);
      thread.on('exit', onExit);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  } catch (e) {
    // Neither thread has done anything yet: end both at once (a graceful close would wait for them to load).
    await Promise.all([rig.worker.terminate(), thread.terminate()]);
    throw e;
  }
  const memory = new CellThreadMemory(ready.layout, ready.buffer);
  const truth = cellTruth(opts.gap);
  return {
    rig,
    world: new SharedCellWorld(memory, truth, opts.task),
    truth,
    task: opts.task,
    layout: opts.layout,
    thread,
  };
}
