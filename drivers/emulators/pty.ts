/**
 * The CAN adapter emulator on a real pseudo-terminal pair made by socat (pty-link.ts): a host
 * program (tandem rig probe/hold, or anything speaking SLCAN / Damiao USB-CAN) opens LINK as it
 * would open /dev/ttyACM0. unplug() kills socat, so the host sees the same I/O error as a pulled
 * USB cable.
 */
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { CanTransport } from '../can/bus.js';
import { AdapterEmulator } from './adapter-emulator.js';
import { PtyLink } from './pty-link.js';
import { YamBusEmulator, type YamBusEmulatorOptions } from './yam-bus-emulator.js';

export interface PtyEmulatorOptions {
  readonly transport: CanTransport;
  /** Path the host opens, e.g. /tmp/yam-left. */
  readonly link: string;
  readonly replyLatencyMs?: number;
  readonly emulator?: YamBusEmulatorOptions;
  /** The bus behind the adapter (e.g. a leader arm's, with its teaching handle); default a YAM arm built from `emulator`. */
  readonly bus?: YamBusEmulator;
  /** The socat executable. */
  readonly socat?: string;
  /** How to open the emulator's end (default the native binding; a worker thread passes drivers/can/tty-binding). */
  readonly binding?: BindingInterface;
}

export class PtyEmulator {
  readonly bus: YamBusEmulator;
  adapter: AdapterEmulator;
  private pty: PtyLink | undefined;

  private constructor(private readonly options: PtyEmulatorOptions) {
    this.bus = options.bus ?? new YamBusEmulator(options.emulator);
    this.adapter = new AdapterEmulator(options.transport, this.bus, { replyLatencyMs: options.replyLatencyMs });
  }

  static async start(options: PtyEmulatorOptions): Promise<PtyEmulator> {
    const emu = new PtyEmulator(options);
    try {
      emu.pty = await PtyLink.start(options, emu.adapter);
    } catch (e) {
      emu.adapter.dispose();
      throw e;
    }
    return emu;
  }

  get link(): string {
    return this.options.link;
  }

  get emulatorLink(): string {
    return `${this.options.link}.emulator`;
  }

  setReplyLatencyMs(ms: number): void {
    this.adapter.replyLatencyMs = ms;
  }

  /** Fault injection: the adapter disappears (socat exits, the host's reads fail). */
  async unplug(): Promise<void> {
    this.adapter.dispose();
    await this.pty?.unplug();
  }

  /** The adapter comes back, fresh (SLCAN channel closed); the motors kept their state. */
  async replug(): Promise<void> {
    this.adapter = new AdapterEmulator(this.options.transport, this.bus, {
      replyLatencyMs: this.adapter.replyLatencyMs,
    });
    await this.pty?.replug(this.adapter);
  }

  async stop(): Promise<void> {
    this.adapter.dispose();
    await this.pty?.stop();
  }

  get running(): boolean {
    return this.pty?.running ?? false;
  }
}
