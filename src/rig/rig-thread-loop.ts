/**
 * The rig thread's side: the fixed-rate motor loop (src/rig/control-loop.ts, unchanged) around a
 * rig that lives in this thread, fed from the shared memory the station's main thread writes
 * (src/rig/rig-thread-memory.ts).
 *
 * Every cycle the loop ticks the rig — the safety supervisor's watchdog, faults, e-stop and the
 * motor output — whether or not the main thread said anything, so a stalled main thread costs the
 * motors nothing: its commands go stale, the supervisor holds (then damps) exactly as it does
 * in-thread, and the motors are commanded at the full rate throughout.
 *
 * Between cycles the thread sleeps in Atomics.wait on the request word, so a command, hold or
 * e-stop from the main thread is served the moment it is written (its write() gets what was
 * applied back, as the Rig contract says), and the wake-up at the deadline is not at the mercy of
 * a timer queue. Serial replies that arrived meanwhile are parsed in one event-loop turn before the
 * cycle's work. While a lifecycle call (configure / activate / deactivate) is awaiting the bus, the
 * thread waits on timers instead so that call's I/O can run, and does not tick: the rig is between
 * modes, as it is in-thread while activate() runs.
 */
import { ControlLoop, type LoopStats } from './control-loop.js';
import {
  STATE_DIM,
  type Clock,
  type Rig,
  type RigCommand,
  type RigFault,
  type RigState,
  type InterlockReading,
  type CellInterlock,
} from './contract.js';
import { CTL, RIG_MODES, RigThreadMemory, ST, errorToMessage, type RigErrorMessage } from './rig-thread-memory.js';
import type { RigCycleRing } from './rig-cycle-ring.js';

/** A lifecycle or query call from the main thread. */
export interface RigThreadRequest {
  readonly id: number;
  readonly op: 'configure' | 'activate' | 'deactivate' | 'close' | 'stats' | 'diagnostics';
}

export type RigThreadReply =
  | { readonly id: number; readonly ok: true; readonly value?: unknown }
  | { readonly id: number; readonly ok: false; readonly error: RigErrorMessage };

/** What the rig thread measured about its own loop (the main thread's proxy returns it). */
export interface RigThreadStats extends LoopStats {
  /** Commands the main thread wrote that the supervisor took. */
  readonly commands: number;
  /** Times the supervisor's watchdog held because the main thread's commands went stale. */
  readonly watchdogHolds: number;
  /** The oldest the latest command got while the rig was active, ms. */
  readonly longestCommandAgeMs: number;
  /** Safety events the ring had no room for (the main thread did not drain it). */
  readonly eventsDropped: number;
}

/** Seconds since the Unix epoch, from the monotonic clock: both threads agree on it. */
export function epochNowS(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** The channel to the main thread (worker_threads' parentPort). */
export interface RigThreadPort {
  on(event: 'message', listener: (m: RigThreadRequest) => void): unknown;
  postMessage(m: unknown): void;
}

/** Interlock readings older than this read "open": the station can no longer vouch for them. */
export const INTERLOCK_STALE_MS = 1000;

/** The cell's interlock as the main thread mirrors it into shared memory (stale reads as open). */
export class SharedInterlock implements CellInterlock {
  private readonly sample = new Float64Array(2);
  private static readonly CLOSED: InterlockReading = { open: false };

  constructor(private readonly memory: RigThreadMemory) {}

  current(): InterlockReading {
    this.memory.readInterlock(this.sample);
    if (this.sample[0] === 1)
      return { open: true, reason: this.memory.interlockReason() || "The cell's interlock is open." };
    const ageMs = epochNowS() * 1000 - this.sample[1];
    if (ageMs > INTERLOCK_STALE_MS)
      return {
        open: true,
        reason: `The station has not confirmed the cell's interlock for ${Math.round(ageMs)} ms, so it is treated as open.`,
      };
    return SharedInterlock.CLOSED;
  }
}

/**
 * Wall time in epoch seconds whose waitUntil serves the main thread's requests while it waits:
 * the clock the rig in this thread runs on.
 */
export class RigThreadClock implements Clock {
  readonly passesWhileAwaiting = true;
  /** Set while a lifecycle call awaits the bus: wait on timers so its I/O runs. */
  busy = false;
  private server: (() => void) | undefined;

  constructor(private readonly memory: RigThreadMemory) {}

  nowS(): number {
    return epochNowS();
  }

  /** Who serves requests while waiting (set once by serveRigThread). */
  serveWith(server: () => void): void {
    this.server = server;
  }

  async waitUntil(tS: number): Promise<void> {
    const ctl = this.memory.ctl;
    for (;;) {
      const req = Atomics.load(ctl, CTL.REQ);
      if (req !== Atomics.load(ctl, CTL.ACK)) {
        this.server?.();
        // Let a lifecycle message that came with the request reach its handler.
        await turn();
        continue;
      }
      const leftMs = (tS - epochNowS()) * 1000;
      if (leftMs <= 0) break;
      if (this.busy) await sleep(Math.min(leftMs, 1));
      else Atomics.wait(ctl, CTL.REQ, req, leftMs);
    }
    // Parse the serial replies that arrived while this thread slept.
    await turn();
  }
}

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface ServeOptions {
  readonly rateHz: number;
  /** Extra facts for `diagnostics` (bus counters, notes). */
  readonly diagnostics?: () => unknown;
  /** Frames sent per arm so far, published with the state (tests wait for them to reach the motors). */
  readonly framesOut?: () => readonly [number, number];
  /** Where every cycle's state and sent command go for the recorder (src/rig/rig-cycle-ring.ts). */
  readonly cycles?: RigCycleRing;
}

/**
 * Runs the rig's motor loop in this thread until the main thread asks to close. Resolves after
 * close (the rig's ports released).
 */
export async function serveRigThread(
  rig: Rig,
  clock: RigThreadClock,
  memory: RigThreadMemory,
  port: RigThreadPort,
  options: ServeOptions,
): Promise<void> {
  const ctl = memory.ctl;
  const cmd = {
    position: new Float64Array(STATE_DIM),
    velocity: new Float64Array(STATE_DIM),
    torqueNm: new Float64Array(STATE_DIM),
    hasVelocity: false,
    hasTorque: false,
  };
  const cmdPlain: RigCommand = { position: cmd.position };
  const cmdVel: RigCommand = { position: cmd.position, velocity: cmd.velocity };
  const cmdTau: RigCommand = { position: cmd.position, torqueNm: cmd.torqueNm };
  const cmdBoth: RigCommand = { position: cmd.position, velocity: cmd.velocity, torqueNm: cmd.torqueNm };
  let seenCmd = Atomics.load(ctl, CTL.CMD_COUNT);
  let seenHold = Atomics.load(ctl, CTL.HOLD_COUNT);
  let seenEstop = Atomics.load(ctl, CTL.ESTOP_COUNT);
  let applied: RigCommand | undefined;
  let lastCommandS = NaN;
  let commands = 0;
  let watchdogHolds = 0;
  let longestAgeS = 0;
  let lastFaults: readonly RigFault[] | undefined;
  let cycles = 0;
  const ring = options.cycles;

  const drainEvents = (): void => {
    const events = rig.takeSafetyEvents();
    for (const e of events) {
      if (e.kind === 'watchdog-hold') watchdogHolds++;
      memory.pushEvent(e);
    }
  };

  const sameFaults = (a: readonly RigFault[], b: readonly RigFault[] | undefined): boolean => {
    if (b === undefined || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i].message !== b[i].message) return false;
    return true;
  };

  const publish = (state: RigState): void => {
    const st = memory.beginState();
    st[ST.TIME] = state.timeS;
    st[ST.MODE] = RIG_MODES.indexOf(state.mode);
    st.set(state.position, ST.POSITION);
    st.set(state.velocity, ST.VELOCITY);
    st.set(state.effort, ST.EFFORT);
    if (applied) {
      st.set(applied.position, ST.APPLIED_POSITION);
      if (applied.velocity) st.set(applied.velocity, ST.APPLIED_VELOCITY);
      if (applied.torqueNm) st.set(applied.torqueNm, ST.APPLIED_TORQUE);
    }
    const frames = options.framesOut?.();
    if (frames) {
      st[ST.FRAMES_OUT_LEFT] = frames[0];
      st[ST.FRAMES_OUT_RIGHT] = frames[1];
    }
    st[ST.CYCLES] = cycles;
    if (!sameFaults(state.faults, lastFaults)) {
      lastFaults = state.faults;
      memory.writeFaults(state.faults);
    }
    memory.endState();
  };

  /** Serves what the main thread wrote (e-stop first), publishes, acknowledges. */
  const serveShared = (): void => {
    const req = Atomics.load(ctl, CTL.REQ);
    const nowS = clock.nowS();
    const estops = Atomics.load(ctl, CTL.ESTOP_COUNT);
    if (estops !== seenEstop) {
      seenEstop = estops;
      rig.estop(memory.estopReason());
    }
    const holds = Atomics.load(ctl, CTL.HOLD_COUNT);
    if (holds !== seenHold) {
      seenHold = holds;
      rig.hold();
    }
    const count = memory.readCommand(seenCmd, cmd);
    if (count !== seenCmd) {
      seenCmd = count;
      lastCommandS = nowS;
      commands++;
      applied = rig.write(cmd.hasVelocity ? (cmd.hasTorque ? cmdBoth : cmdVel) : cmd.hasTorque ? cmdTau : cmdPlain);
    }
    drainEvents();
    publish(rig.read());
    memory.served(req);
  };
  clock.serveWith(serveShared);

  // The loop's "rig": ticks the real one (unless a lifecycle call is under way), then publishes.
  const ticking: Rig = {
    model: rig.model,
    configure: () => rig.configure(),
    activate: () => rig.activate(),
    deactivate: () => rig.deactivate(),
    read: () => rig.read(),
    write: (c) => rig.write(c),
    hold: () => rig.hold(),
    estop: (r) => rig.estop(r),
    takeSafetyEvents: () => rig.takeSafetyEvents(),
    tick: () => {
      cycles++;
      // Ticked from the first cycle, configured or not: skipping the tick until configure (so an
      // unconfigured rig publishes no NaN joints) cost the stand-in's camera rollouts a third of
      // their step-timing rows and sent frames to motors that should have heard none — not traced.
      // Until configure its joints are NaN, which readers show as unknown (the Teleop page: '—').
      if (!clock.busy) {
        // An e-stop written while the loop was working is served before this cycle's output.
        if (Atomics.load(ctl, CTL.ESTOP_COUNT) !== seenEstop) serveShared();
        rig.tick();
        drainEvents();
      }
      const state = rig.read();
      if (state.mode === 'active' && lastCommandS === lastCommandS) {
        const age = clock.nowS() - lastCommandS;
        if (age > longestAgeS) longestAgeS = age;
      }
      publish(state);
      ring?.push(cycles, state, applied);
    },
  };
  const loop = new ControlLoop({ rig: ticking, clock, rateHz: options.rateHz });

  const stats = (): RigThreadStats => ({
    ...loop.stats(),
    commands,
    watchdogHolds,
    longestCommandAgeMs: longestAgeS * 1000,
    eventsDropped: memory.eventsDropped,
  });

  let closing: (() => void) | undefined;
  port.on('message', (m: RigThreadRequest) => {
    const reply = (r: RigThreadReply): void => port.postMessage(r);
    const lifecycle = async (fn: () => Promise<void>): Promise<void> => {
      clock.busy = true;
      let error: RigErrorMessage | undefined;
      try {
        await fn();
      } catch (e) {
        error = errorToMessage(e);
      }
      clock.busy = false;
      // State and events first: the main thread reads them as soon as the answer arrives.
      drainEvents();
      publish(rig.read());
      reply(error ? { id: m.id, ok: false, error } : { id: m.id, ok: true });
    };
    switch (m.op) {
      case 'configure':
        void lifecycle(() => rig.configure());
        break;
      case 'activate':
        void lifecycle(async () => {
          await rig.activate();
          lastCommandS = clock.nowS();
          // The loop's statistics describe the motors' loop while they are powered.
          loop.resetStats();
          longestAgeS = 0;
          watchdogHolds = 0;
          commands = 0;
        });
        break;
      case 'deactivate':
        void lifecycle(() => rig.deactivate());
        break;
      case 'stats':
        reply({ id: m.id, ok: true, value: stats() });
        break;
      case 'diagnostics':
        reply({ id: m.id, ok: true, value: options.diagnostics?.() });
        break;
      case 'close':
        loop.stop();
        closing = () => {
          void (async () => {
            try {
              await rig.close?.();
              reply({ id: m.id, ok: true, value: stats() });
            } catch (e) {
              reply({ id: m.id, ok: false, error: errorToMessage(e) });
            }
          })();
        };
        break;
    }
  });

  publish(rig.read());
  port.postMessage({ ready: true });
  await loop.run();
  closing?.();
}
