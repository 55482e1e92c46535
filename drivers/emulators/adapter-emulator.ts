/**
 * The USB side of an emulated CAN adapter: takes the bytes a host writes (SLCAN ASCII or Damiao
 * USB-CAN frames), hands CAN frames to an emulated bus, and produces the bytes the adapter would send
 * back, after a configurable reply latency. Fault injection at byte level: garbage bytes.
 */
import type { CanTransport } from '../can/bus.js';
import type { CanFrame } from '../can/frame.js';
import type { ClockTimer } from '../../src/rig/contract.js';
import { wallTimer } from '../../src/rig/clocks.js';
import { SLCAN_ERROR, SLCAN_OK, SLCAN_TX_OK, SlcanAdapterDecoder, encodeSlcanFrame } from '../can/slcan-codec.js';
import { DamiaoAdapterDecoder, encodeDamiaoRx } from '../can/damiao-usb-codec.js';
import type { YamBusEmulator } from './yam-bus-emulator.js';

export interface AdapterEmulatorOptions {
  /** Delay between a command reaching the bus and its reply leaving the adapter, ms. */
  readonly replyLatencyMs?: number;
  /** The timer the latency runs on (default the wall clock's); a virtual clock's passive timer in tests on virtual time. */
  readonly timer?: ClockTimer;
}

export class AdapterEmulator {
  replyLatencyMs: number;
  /** SLCAN channel open (`O`); the Damiao adapter is always open. */
  private channelOpen: boolean;
  private readonly decoder: { push(chunk: Uint8Array): void };
  private readonly outputs = new Set<(bytes: Buffer) => void>();
  private readonly timers = new Set<() => void>();
  private readonly timer: ClockTimer;
  /** Bytes produced while handling one chunk; flushed together. */
  private immediate: Buffer[] = [];
  private delayed: Buffer[] = [];
  garbageBytesFromHost = 0;
  /** Damiao transmit requests whose fixed fields were impossible (their bytes count as garbage too). */
  rejectedRequestsFromHost = 0;

  constructor(
    readonly transport: CanTransport,
    readonly bus: YamBusEmulator,
    options: AdapterEmulatorOptions = {},
  ) {
    this.replyLatencyMs = options.replyLatencyMs ?? 0;
    this.timer = options.timer ?? wallTimer;
    this.channelOpen = transport === 'damiao';
    if (transport === 'slcan') {
      this.decoder = new SlcanAdapterDecoder((e) => {
        if (e.type === 'frame') {
          if (!this.channelOpen) {
            this.immediate.push(SLCAN_ERROR);
            return;
          }
          this.immediate.push(SLCAN_TX_OK);
          this.toBus(e.frame);
        } else if (e.type === 'command') this.slcanCommand(e.text);
        else {
          this.garbageBytesFromHost += e.bytes;
          this.immediate.push(SLCAN_ERROR);
        }
      });
    } else {
      this.decoder = new DamiaoAdapterDecoder((e) => {
        if (e.type === 'frame') this.toBus(e.frame);
        else if (e.type === 'rejected') this.rejectedRequestsFromHost++;
        else this.garbageBytesFromHost += e.bytes;
      });
    }
  }

  /** Bytes from the host. */
  write(bytes: Uint8Array): void {
    this.decoder.push(bytes);
    if (this.immediate.length > 0) {
      const out = Buffer.concat(this.immediate);
      this.immediate = [];
      this.emit(out);
    }
    if (this.delayed.length > 0) {
      const out = Buffer.concat(this.delayed);
      this.delayed = [];
      if (this.replyLatencyMs <= 0) this.emit(out);
      else {
        const cancel = this.timer(this.replyLatencyMs, () => {
          this.timers.delete(cancel);
          this.emit(out);
        });
        this.timers.add(cancel);
      }
    }
  }

  onOutput(listener: (bytes: Buffer) => void): () => void {
    this.outputs.add(listener);
    return () => this.outputs.delete(listener);
  }

  /** Fault injection: bytes that are no frame at all, straight into the host's receive stream. */
  injectGarbage(
    bytes: Uint8Array = Uint8Array.of(0x13, 0xaa, 0x37, 0x55, 0x74, 0x30, 0x0d, 0xff, 0x00, 0x55, 0xaa),
  ): void {
    this.emit(Buffer.from(bytes));
  }

  /** Fault injection: an unsolicited frame, e.g. from an unexpected ID. */
  injectFrame(frame: CanFrame): void {
    this.emit(this.encodeFrame(frame));
  }

  dispose(): void {
    for (const cancel of this.timers) cancel();
    this.timers.clear();
  }

  private toBus(frame: CanFrame): void {
    for (const reply of this.bus.handle(frame)) this.delayed.push(this.encodeFrame(reply));
  }

  private encodeFrame(frame: CanFrame): Buffer {
    return this.transport === 'slcan' ? encodeSlcanFrame(frame) : encodeDamiaoRx(frame);
  }

  private slcanCommand(text: string): void {
    const c = text[0];
    if (c === 'S' && /^S[0-8]$/.test(text) && !this.channelOpen) this.immediate.push(SLCAN_OK);
    else if (text === 'O' && !this.channelOpen) {
      this.channelOpen = true;
      this.immediate.push(SLCAN_OK);
    } else if (text === 'C' && this.channelOpen) {
      this.channelOpen = false;
      this.immediate.push(SLCAN_OK);
    } else if (text === 'V') this.immediate.push(Buffer.from('V1013\r', 'latin1'));
    else if (text === 'N') this.immediate.push(Buffer.from('NEMU1\r', 'latin1'));
    else this.immediate.push(SLCAN_ERROR);
  }

  private emit(bytes: Buffer): void {
    for (const l of this.outputs) l(bytes);
  }
}
