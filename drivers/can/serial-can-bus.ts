/**
 * CanBus over a serial port through the real `serialport` API. The binding is passed in, so the same
 * code runs on a real tty (bindings-cpp, the default), a socat pty, or the in-process emulator binding.
 * On unplug the bus reports `disconnected`, drops sends, and reopens the same path until it is back.
 */
import { SerialPort } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { CanFrame } from './frame.js';
import type { CanBus, CanBusEvent, CanBusStats, CanTransport } from './bus.js';
import { SLCAN_BITRATES, SlcanHostDecoder, encodeSlcanFrameInto, slcanFrameLength } from './slcan-codec.js';
import { DAMIAO_TX_LENGTH, DamiaoHostDecoder, encodeDamiaoTxInto } from './damiao-usb-codec.js';

export interface SerialCanBusOptions {
  readonly transport: CanTransport;
  readonly path: string;
  /** Serial baud rate; SLCAN over USB CDC ignores it, the Damiao adapter uses 921600. */
  readonly baudRate?: number;
  /** CAN bit rate (SLCAN `S` command). Default 1 Mbit/s. */
  readonly canBitrate?: number;
  /** Defaults to the native binding (real ttys and ptys). */
  readonly binding?: BindingInterface;
  /** How long to wait for the adapter to acknowledge a setup command. */
  readonly setupTimeoutMs?: number;
  /** How often to try reopening after an unplug. 0 disables reconnecting. */
  readonly reconnectIntervalMs?: number;
  /** What to check when an SLCAN adapter does not answer its setup, in the words of whoever chose the framing. */
  readonly wrongFramingHint?: string;
}

export const DEFAULT_BAUD: Readonly<Record<CanTransport, number>> = { slcan: 115200, damiao: 921600 };

const TRANSPORT_NAME: Readonly<Record<CanTransport, string>> = {
  slcan: 'SLCAN adapter',
  damiao: 'Damiao USB-CAN adapter',
};

export class SerialCanBus implements CanBus {
  readonly description: string;
  readonly stats: CanBusStats = {
    framesIn: 0,
    framesOut: 0,
    garbageBytes: 0,
    rejectedFrames: 0,
    adapterErrors: 0,
    reconnects: 0,
  };
  private port: SerialPortStream | undefined;
  private isConnected = false;
  private closing = false;
  private reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly frameListeners = new Set<(f: CanFrame) => void>();
  private readonly eventListeners = new Set<(e: CanBusEvent) => void>();
  private readonly decoder: { push(chunk: Uint8Array): void };
  /** Pending setup acknowledgements (SLCAN only). */
  private ackWaiter: ((ok: boolean) => void) | undefined;
  /** During the setup flush: answers and frames are leftovers, dropped silently. */
  private settling = false;
  private lastRxMs = 0;
  private txBuffer = Buffer.alloc(512);
  private readonly binding: BindingInterface;

  constructor(private readonly options: SerialCanBusOptions) {
    this.description = `${TRANSPORT_NAME[options.transport]} on ${options.path}`;
    this.binding = options.binding ?? (SerialPort.binding as unknown as BindingInterface);
    if (options.transport === 'slcan') {
      this.decoder = new SlcanHostDecoder((e) => {
        if (this.settling) return;
        if (e.type === 'frame') this.deliver(e.frame);
        else if (e.type === 'ok') {
          if (!e.transmitted) this.resolveAck(true);
        } else if (e.type === 'error') {
          if (!this.resolveAck(false)) {
            this.stats.adapterErrors++;
            this.emit({
              kind: 'adapter-error',
              message: `The ${this.description} refused a frame (it answered with an error); the CAN bus may be off or its buffer full.`,
            });
          }
        } else this.garbage(e.bytes);
      });
    } else {
      this.decoder = new DamiaoHostDecoder((e) => {
        if (e.type === 'frame') this.deliver(e.frame);
        else if (e.type === 'report') {
          this.stats.adapterErrors++;
          this.emit({
            kind: 'adapter-error',
            message: `The ${this.description} reported status 0x${e.cmd.toString(16).padStart(2, '0')} instead of a received frame; a transmit may have failed.`,
          });
        } else if (e.type === 'rejected') {
          // Its bytes arrive as a 'garbage' event too; the count tells the operator how often framing broke.
          this.stats.rejectedFrames++;
        } else this.garbage(e.bytes);
      });
    }
  }

  get connected(): boolean {
    return this.isConnected;
  }

  async open(): Promise<void> {
    this.closing = false;
    await this.openPort();
  }

  private async openPort(): Promise<void> {
    const { path, transport } = this.options;
    const port = new SerialPortStream({
      binding: this.binding,
      path,
      baudRate: this.options.baudRate ?? DEFAULT_BAUD[transport],
      autoOpen: false,
    });
    await new Promise<void>((resolve, reject) =>
      port.open((err) => {
        if (err)
          reject(
            new Error(
              `Could not open ${this.description}: ${err.message.replace(/^Error: /, '')}. Check the cable and the --port path.`,
            ),
          );
        else resolve();
      }),
    );
    this.port = port;
    port.on('data', (chunk: Buffer) => {
      this.lastRxMs = performance.now();
      this.decoder.push(chunk);
    });
    port.on('error', () => {
      /* errors also surface as 'close' with disconnected; nothing else to do */
    });
    port.on('close', (err: { disconnected?: boolean } | null) => {
      if (this.port !== port) return;
      this.port = undefined;
      const wasConnected = this.isConnected;
      this.isConnected = false;
      if (this.closing) return;
      if (wasConnected || err?.disconnected) {
        this.emit({
          kind: 'disconnected',
          message: `The ${this.description} disconnected (unplugged or closed); motors without commands fall back to their own watchdog. Reconnecting…`,
        });
      }
      this.scheduleReconnect();
    });
    try {
      if (transport === 'slcan') await this.setupSlcan();
    } catch (e) {
      this.port = undefined;
      await new Promise<void>((r) => (port.isOpen ? port.close(() => r()) : r()));
      throw e;
    }
    this.isConnected = true;
  }

  private async setupSlcan(): Promise<void> {
    const bitrate = this.options.canBitrate ?? 1_000_000;
    const rateCommand = SLCAN_BITRATES[bitrate];
    if (!rateCommand)
      throw new Error(
        `SLCAN cannot set a CAN bit rate of ${bitrate} bit/s; use one of ${Object.keys(SLCAN_BITRATES).join(', ')}.`,
      );
    // A stale OK or BEL (left from a previous session, or the answer to our own buffer-clearing CRs)
    // must not be taken for the answer to the next command: settle until the line is quiet, and retry
    // the setup if a command is still refused.
    for (let attempt = 0; ; attempt++) {
      await this.settle();
      try {
        // Close first in case the channel was left open; an error answer to that is expected.
        await this.command('C', true);
        await this.command(rateCommand, false);
        await this.command('O', false);
        return;
      } catch (e) {
        if (attempt >= 2 || !/refused/.test((e as Error).message)) throw e;
      }
    }
  }

  /** Sends CRs (Lawicel: empties the adapter's line buffer), then waits for 30 ms of silence (at most 500 ms). */
  private async settle(): Promise<void> {
    this.settling = true;
    this.lastRxMs = performance.now();
    this.port?.write(Buffer.from('\r\r\r', 'latin1'));
    const start = performance.now();
    while (performance.now() - this.lastRxMs < 30 && performance.now() - start < 500)
      await new Promise((r) => setTimeout(r, 5));
    this.settling = false;
  }

  private command(text: string, errorOk: boolean): Promise<void> {
    const port = this.port;
    if (!port) return Promise.reject(new Error(`The ${this.description} is not open.`));
    const timeoutMs = this.options.setupTimeoutMs ?? 1000;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ackWaiter = undefined;
        reject(
          new Error(
            `The ${this.description} did not answer the SLCAN command '${text}' within ${timeoutMs} ms. ${this.options.wrongFramingHint ?? 'Is it an SLCAN adapter (e.g. CANable with slcan firmware) and is --transport right?'}`,
          ),
        );
      }, timeoutMs);
      this.ackWaiter = (ok) => {
        clearTimeout(timer);
        if (ok || errorOk) resolve();
        else reject(new Error(`The ${this.description} refused the SLCAN command '${text}'.`));
      };
      port.write(Buffer.from(`${text}\r`, 'latin1'));
    });
  }

  private resolveAck(ok: boolean): boolean {
    const w = this.ackWaiter;
    if (!w) return false;
    this.ackWaiter = undefined;
    w(ok);
    return true;
  }

  private scheduleReconnect(): void {
    const interval = this.options.reconnectIntervalMs ?? 200;
    if (interval <= 0 || this.closing || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.closing) return;
      this.openPort().then(
        () => {
          this.stats.reconnects++;
          this.emit({ kind: 'reconnected', message: `The ${this.description} is back.` });
        },
        () => this.scheduleReconnect(),
      );
    }, interval);
  }

  send(frames: CanFrame | readonly CanFrame[]): boolean {
    const port = this.port;
    if (!port || !this.isConnected) return false;
    const list = Array.isArray(frames) ? (frames as readonly CanFrame[]) : [frames as CanFrame];
    let size = 0;
    for (const f of list) size += this.options.transport === 'slcan' ? slcanFrameLength(f) : DAMIAO_TX_LENGTH;
    // serialport keeps a reference to what we write until it is flushed, so each write gets its own slice
    // of a pooled buffer rather than a buffer we overwrite next cycle.
    if (this.txBuffer.length < size) this.txBuffer = Buffer.alloc(Math.max(size, 4096));
    const out = this.txBuffer.subarray(0, size);
    this.txBuffer = this.txBuffer.length - size >= 256 ? this.txBuffer.subarray(size) : Buffer.alloc(4096);
    let o = 0;
    for (const f of list)
      o = this.options.transport === 'slcan' ? encodeSlcanFrameInto(f, out, o) : encodeDamiaoTxInto(f, out, o);
    port.write(out);
    this.stats.framesOut += list.length;
    return true;
  }

  onFrame(listener: (frame: CanFrame) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }

  onEvent(listener: (event: CanBusEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const port = this.port;
    this.port = undefined;
    this.isConnected = false;
    if (!port || !port.isOpen) return;
    if (this.options.transport === 'slcan') {
      await new Promise<void>((r) => port.write(Buffer.from('C\r', 'latin1'), () => r()));
    }
    await new Promise<void>((r) => port.drain(() => r()));
    await new Promise<void>((r) => port.close(() => r()));
  }

  private deliver(frame: CanFrame): void {
    this.stats.framesIn++;
    for (const l of this.frameListeners) l(frame);
  }

  private garbage(bytes: number): void {
    this.stats.garbageBytes += bytes;
    this.emit({
      kind: 'garbage',
      bytes,
      message: `Dropped ${bytes} byte${bytes === 1 ? '' : 's'} from the ${this.description} that were not a valid frame.`,
    });
  }

  private emit(e: CanBusEvent): void {
    for (const l of this.eventListeners) l(e);
  }
}
