/**
 * Two emulated YAM arms on socat ptys, run in their own thread (emulator-thread-worker.ts), for
 * tests and benchmarks that block the main thread: what the motors received, and whether any of
 * them damped by its own watchdog, is recorded where the block cannot reach.
 */
import { Worker } from 'node:worker_threads';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ArmSide } from '../../src/rig/contract.js';
import type { CanTransport } from '../../drivers/can/bus.js';
import type { EmulatedBusFault } from '../../drivers/emulators/yam-bus-emulator.js';

export interface EmulatorThreadInit {
  readonly transport: CanTransport;
  readonly links: Partial<Record<ArmSide, string>>;
  readonly replyLatencyMs?: number;
}

export interface EmulatorThreadRequest {
  readonly id: number;
  readonly op: 'status' | 'reset-records' | 'reset' | 'inject' | 'unplug' | 'replug' | 'stop';
  readonly side?: ArmSide;
  readonly fault?: EmulatedBusFault;
}

/** One motor as the emulator saw it. */
export interface MotorRecord {
  readonly id: number;
  /** Damiao status nibble now (1 enabled, 0 disabled, 0xD lost communication = watchdog damping). */
  readonly status: number;
  readonly kp: number;
  readonly kd: number;
  /** MIT frames received since the last reset. */
  readonly mits: number;
  /** Longest time between two MIT frames while the motor was enabled, ms (emulator thread's clock). */
  readonly longestGapMs: number;
  /** The motor's own watchdog tripped (it damped itself) since the last reset. */
  readonly everLost: boolean;
  /** When (epoch ms) the motor first got a command without stiffness after stiff ones since the last reset; NaN if never. */
  readonly dampedAtEpochMs: number;
}

export interface EmulatorStatus {
  readonly motors: Partial<Record<ArmSide, MotorRecord[]>>;
  readonly framesReceived: Partial<Record<ArmSide, number>>;
}

export interface EmulatorThread {
  readonly links: Record<ArmSide, string>;
  status(): Promise<EmulatorStatus>;
  resetRecords(): Promise<void>;
  /** Fresh arms on the same ptys: motors at rest, disabled, no faults (between tests). */
  reset(): Promise<void>;
  /** What each arm's motors are doing now (the Rig contract suite's probe), once `framesOut` frames have reached them. */
  drives(framesOut: readonly [number, number]): Promise<Record<ArmSide, 'off' | 'stiff' | 'damp'>>;
  inject(side: ArmSide, fault: EmulatedBusFault): Promise<void>;
  /** The arm's adapter is pulled: socat exits, so the host's port fails as with a USB cable pulled. */
  unplug(side: ArmSide): Promise<void>;
  /** The adapter is back on the same path (fresh, its channel closed); the motors kept their state. */
  replug(side: ArmSide): Promise<void>;
  stop(): Promise<void>;
}

const DELIVERY_BOUND_MS = 2000;

export async function startEmulatorThread(
  options: { transport?: CanTransport; replyLatencyMs?: number } = {},
): Promise<EmulatorThread> {
  const dir = mkdtempSync(join(tmpdir(), 'yam-emu-'));
  const links = { left: join(dir, 'left'), right: join(dir, 'right') };
  const worker = new Worker(new URL('./emulator-thread-entry.mjs', import.meta.url), {
    workerData: {
      transport: options.transport ?? 'slcan',
      links,
      replyLatencyMs: options.replyLatencyMs,
    } satisfies EmulatorThreadInit,
  });
  const pending = new Map<number, (v: unknown) => void>();
  let nextId = 1;
  let failed: Error | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (m: { ready?: true; id?: number; value?: unknown }) => {
      if (m.ready) resolve();
      else pending.get(m.id!)?.(m.value);
    });
    worker.on('error', (e) => {
      failed = e;
      reject(e);
    });
  });
  await ready;
  const call = (op: EmulatorThreadRequest['op'], extra: Partial<EmulatorThreadRequest> = {}): Promise<unknown> => {
    if (failed) return Promise.reject(failed);
    const id = nextId++;
    return new Promise((resolve) => {
      pending.set(id, resolve);
      worker.postMessage({ id, op, ...extra });
    });
  };
  return {
    links,
    status: () => call('status') as Promise<EmulatorStatus>,
    resetRecords: async () => void (await call('reset-records')),
    reset: async () => void (await call('reset')),
    drives: async (framesOut) => {
      // Bytes through two ptys and socat reach the motors in a millisecond or two on a quiet machine;
      // on a busy one the real-time tier's own processes can hold them up for a few hundred. Waiting
      // for them is not the contract under test: reading the motors before the frames arrive is.
      const end = performance.now() + DELIVERY_BOUND_MS;
      let st = (await call('status')) as EmulatorStatus;
      const delivered = (): boolean =>
        (st.framesReceived.left ?? 0) >= framesOut[0] && (st.framesReceived.right ?? 0) >= framesOut[1];
      while (!delivered() && performance.now() < end) {
        await new Promise((r) => setTimeout(r, 2));
        st = (await call('status')) as EmulatorStatus;
      }
      if (!delivered())
        throw new Error(
          `the rig sent ${framesOut.join('/')} frames (left/right) but the motors received ${st.framesReceived.left ?? 0}/${st.framesReceived.right ?? 0} after ${DELIVERY_BOUND_MS} ms`,
        );
      const of = (side: ArmSide): 'off' | 'stiff' | 'damp' => {
        const enabled = (st.motors[side] ?? []).filter((m) => m.status === 1);
        if (enabled.length === 0 || enabled.every((m) => m.kp === 0 && m.kd === 0)) return 'off';
        return enabled.some((m) => m.kp > 0) ? 'stiff' : 'damp';
      };
      return { left: of('left'), right: of('right') };
    },
    inject: async (side, fault) => void (await call('inject', { side, fault })),
    unplug: async (side) => void (await call('unplug', { side })),
    replug: async (side) => void (await call('replug', { side })),
    stop: async () => {
      await call('stop');
      await worker.terminate();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
