import type { CanFrame } from './frame.js';

export type CanTransport = 'slcan' | 'damiao';
export const CAN_TRANSPORTS: readonly CanTransport[] = ['slcan', 'damiao'];

export type CanBusEventKind =
  /** The adapter went away (unplugged, pty closed); the bus keeps trying to reopen it. */
  | 'disconnected'
  | 'reconnected'
  /** The adapter reported an error (SLCAN BEL, Damiao non-frame report). */
  | 'adapter-error'
  /** Bytes that did not parse were dropped. */
  | 'garbage';

export interface CanBusEvent {
  readonly kind: CanBusEventKind;
  /** One sentence an operator understands. */
  readonly message: string;
  /** For 'garbage': how many bytes were dropped. */
  readonly bytes?: number;
}

export interface CanBusStats {
  framesIn: number;
  framesOut: number;
  garbageBytes: number;
  /**
   * Candidates that looked like frames (header and trailer in place) but whose fixed fields no adapter
   * writes (Damiao: DLC over 8, an ID too wide, another frame starting inside); dropped, never delivered.
   */
  rejectedFrames: number;
  adapterErrors: number;
  reconnects: number;
}

/** A CAN bus reached through some adapter. Drivers take one in; they never build their own. */
export interface CanBus {
  /** e.g. "SLCAN adapter on /dev/ttyACM0". */
  readonly description: string;
  readonly connected: boolean;
  readonly stats: Readonly<CanBusStats>;
  /** Opens the adapter and sets the bit rate; rejects with an operator-readable Error. */
  open(): Promise<void>;
  /** Queues frames for transmission in one write. Returns false (and sends nothing) while disconnected. */
  send(frames: CanFrame | readonly CanFrame[]): boolean;
  onFrame(listener: (frame: CanFrame) => void): () => void;
  onEvent(listener: (event: CanBusEvent) => void): () => void;
  close(): Promise<void>;
}
