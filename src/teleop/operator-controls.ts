/**
 * What the operator can do during a teleop session, from wherever they are:
 *   next     start the take now / end the take or the reset early
 *   discard  throw the current (or just-finished) take away and record that episode again
 *   sync     engage or release leader–follower sync
 *   quit     stop the session after the take in flight (resume later with --resume)
 *
 * Sources, all feeding one queue:
 *   - the terminal in raw mode (works over SSH: it is the SSH session's own stdin, not a global
 *     key hook): space/Enter/→/n next, ←/d/Backspace discard, e sync, q/Esc/Ctrl-C quit;
 *     a non-TTY stdin (a pipe) is read the same way, byte by byte;
 *   - a foot pedal that is an HID keyboard, read from its evdev node (/dev/input/eventN), so it
 *     works with nobody at the station's console: KEY_A/←/PageUp discard, KEY_B/→/PageDown/Space/
 *     Enter next, KEY_C sync, Esc quit;
 *   - the leader's buttons (the teaching handle): top button sync, second button next, second
 *     button held ≥ 0.8 s discard.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import type { LeaderEvent } from '../rig/leader.js';

export type OperatorAction = 'next' | 'discard' | 'sync' | 'quit';

export interface ActionNote {
  readonly action: OperatorAction;
  /** 'keyboard', 'pedal', 'leader left button 1', … */
  readonly from: string;
}

/** The second handle button held this long is a discard, not a next. */
export const LONG_PRESS_S = 0.8;

export class OperatorControls {
  private queue: ActionNote[] = [];
  private waiter: (() => void) | undefined;
  private readonly cleanups: (() => void)[] = [];
  private readonly pressedAt = new Map<string, number>();
  /** Who can still answer a question (a refused engage): the keyboard until its stream ends, a pedal, a person at the handle or the station UI. */
  private readonly attendants = new Set<string>();

  /** A person who can act through these controls is there (the station UI, a hand-moved leader's buttons). */
  attend(who: string): void {
    this.attendants.add(who);
  }

  /** Whether anyone can still act: false once stdin has ended and no pedal, handle or UI is attached. */
  get attended(): boolean {
    return this.attendants.size > 0;
  }

  push(action: OperatorAction, from: string): void {
    this.queue.push({ action, from });
    this.wake();
  }

  /** The oldest action not yet taken, if any. */
  take(): ActionNote | undefined {
    return this.queue.shift();
  }

  /**
   * Resolves with the next action, or undefined once `until` passes (a number: wall milliseconds; a
   * promise: when it settles — a session waits on its rig clock this way, so on virtual time its
   * takes last exactly their length) or at once when the signal is aborted.
   */
  async next(until: number | Promise<unknown>, signal?: AbortSignal): Promise<ActionNote | undefined> {
    const ready = this.take();
    if (ready || signal?.aborted) return ready;
    await new Promise<void>((resolve) => {
      let settled = false;
      const timer = typeof until === 'number' ? setTimeout(done, Math.max(0, until)) : undefined;
      if (typeof until !== 'number') void until.then(done, done);
      const onAbort = (): void => done();
      signal?.addEventListener('abort', onAbort, { once: true });
      function done(): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }
      this.waiter = done;
    });
    this.waiter = undefined;
    return this.take();
  }

  /** The leader's buttons as actions (see the module comment). */
  leaderEvents(events: readonly LeaderEvent[]): void {
    for (const e of events) {
      if (e.kind !== 'button') continue;
      const key = `${e.arm}/${e.button}`;
      const from = `the ${e.arm} handle's ${e.button === 0 ? 'top' : 'second'} button`;
      if (e.button === 0) {
        if (e.pressed) this.push('sync', from);
      } else if (e.pressed) this.pressedAt.set(key, e.timeS);
      else {
        const at = this.pressedAt.get(key);
        this.pressedAt.delete(key);
        this.push(at !== undefined && e.timeS - at >= LONG_PRESS_S ? 'discard' : 'next', from);
      }
    }
  }

  /**
   * Reads keys from a terminal (raw mode, restored on close) or any byte stream. Returns false when
   * the stream is a TTY that cannot be put in raw mode.
   */
  attachKeyboard(input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown }): boolean {
    const tty = input.isTTY === true && typeof input.setRawMode === 'function';
    if (input.isTTY && !tty) return false;
    if (tty) input.setRawMode!(true);
    const onData = (chunk: Buffer | string): void => {
      for (const a of keysToActions(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) this.push(a, 'keyboard');
    };
    // A pipe that ends (a script's stdin, /dev/null) can answer nothing more.
    const onEnd = (): void => {
      this.attendants.delete('keyboard');
      this.wake();
    };
    this.attendants.add('keyboard');
    input.on('data', onData).once('end', onEnd);
    input.resume();
    this.cleanups.push(() => {
      input.off('data', onData).off('end', onEnd);
      if (tty) input.setRawMode!(false);
      input.pause();
    });
    return true;
  }

  /** Reads a foot pedal's evdev node (Linux input_event records); `onProblem` hears one sentence if it fails. */
  attachPedal(path: string, onProblem: (sentence: string) => void): void {
    let stream: ReadStream;
    try {
      stream = createReadStream(path);
    } catch (e) {
      onProblem(`Cannot read the pedal at ${path}: ${(e as Error).message}.`);
      return;
    }
    const parser = new EvdevParser((code) => {
      const a = PEDAL_KEYS.get(code);
      if (a) this.push(a, 'pedal');
    });
    this.attendants.add('pedal');
    stream.on('data', (chunk) => parser.push(chunk as Buffer));
    stream.on('error', (e) => {
      this.attendants.delete('pedal');
      onProblem(
        `The pedal at ${path} cannot be read (${e.message}); check that it is plugged in and that this user may read it (the 'input' group), or use the keyboard.`,
      );
      this.wake();
    });
    this.cleanups.push(() => stream.destroy());
  }

  close(): void {
    for (const c of this.cleanups.splice(0)) c();
    this.wake();
  }

  /** Ends a pending next() early (it resolves with whatever is queued, perhaps nothing). */
  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

/** Terminal bytes → actions. Escape sequences: ESC [ C (→), ESC [ D (←); a lone ESC quits. */
export function keysToActions(bytes: Uint8Array): OperatorAction[] {
  const out: OperatorAction[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0x1b) {
      if (bytes[i + 1] === 0x5b || bytes[i + 1] === 0x4f) {
        const c = bytes[i + 2];
        if (c === 0x43) out.push('next');
        else if (c === 0x44) out.push('discard');
        else if (c === 0x36 && bytes[i + 3] === 0x7e)
          out.push('next'); // PageDown
        else if (c === 0x35 && bytes[i + 3] === 0x7e) out.push('discard'); // PageUp
        i += c === 0x35 || c === 0x36 ? 3 : 2;
      } else out.push('quit');
      continue;
    }
    const ch = String.fromCharCode(b).toLowerCase();
    if (ch === ' ' || ch === '\r' || ch === '\n' || ch === 'n' || ch === 'b') out.push('next');
    else if (ch === 'd' || ch === 'a' || b === 0x7f || b === 0x08) out.push('discard');
    else if (ch === 'e' || ch === 'c') out.push('sync');
    else if (ch === 'q' || b === 0x03 || b === 0x04) out.push('quit');
  }
  return out;
}

/** Linux key codes (input-event-codes.h) a pedal sends → actions. */
export const PEDAL_KEYS: ReadonlyMap<number, OperatorAction> = new Map([
  [30, 'discard'], // KEY_A
  [105, 'discard'], // KEY_LEFT
  [104, 'discard'], // KEY_PAGEUP
  [48, 'next'], // KEY_B
  [106, 'next'], // KEY_RIGHT
  [109, 'next'], // KEY_PAGEDOWN
  [57, 'next'], // KEY_SPACE
  [28, 'next'], // KEY_ENTER
  [46, 'sync'], // KEY_C
  [1, 'quit'], // KEY_ESC
]);

/** struct input_event on 64-bit Linux: timeval (2 × 8 bytes), type u16, code u16, value s32 = 24 bytes. */
export const INPUT_EVENT_BYTES = 24;
const EV_KEY = 1;

/** Splits an evdev byte stream into key presses (value 1; repeats and releases ignored). */
export class EvdevParser {
  private pending = Buffer.alloc(0);

  constructor(private readonly onPress: (code: number) => void) {}

  push(chunk: Buffer): void {
    const buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let o = 0;
    for (; o + INPUT_EVENT_BYTES <= buf.length; o += INPUT_EVENT_BYTES) {
      const type = buf.readUInt16LE(o + 16);
      const code = buf.readUInt16LE(o + 18);
      const value = buf.readInt32LE(o + 20);
      if (type === EV_KEY && value === 1) this.onPress(code);
    }
    this.pending = Buffer.from(buf.subarray(o));
  }
}

/** One input_event record (for tests and emulated pedals). */
export function inputEvent(type: number, code: number, value: number, timeS = 0): Buffer {
  const b = Buffer.alloc(INPUT_EVENT_BYTES);
  b.writeBigInt64LE(BigInt(Math.floor(timeS)), 0);
  b.writeBigInt64LE(BigInt(Math.round((timeS % 1) * 1e6)), 8);
  b.writeUInt16LE(type, 16);
  b.writeUInt16LE(code, 18);
  b.writeInt32LE(value, 20);
  return b;
}
