/**
 * The emulator on a real pseudo-terminal pair made by socat:
 *   socat -d -d pty,raw,echo=0,link=LINK pty,raw,echo=0,link=LINK.emulator
 * A host program (tandem rig probe/hold, or anything speaking SLCAN / Damiao USB-CAN) opens LINK as
 * it would open /dev/ttyACM0; the emulator serves LINK.emulator through the native serialport
 * binding. unplug() kills socat, so the host sees the same I/O error as a pulled USB cable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { SerialPort } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { CanTransport } from '../can/bus.js';
import { AdapterEmulator } from './adapter-emulator.js';
import { YamBusEmulator, type YamBusEmulatorOptions } from './yam-bus-emulator.js';

export interface PtyEmulatorOptions {
  readonly transport: CanTransport;
  /** Path the host opens, e.g. /tmp/yam-left. */
  readonly link: string;
  readonly replyLatencyMs?: number;
  readonly emulator?: YamBusEmulatorOptions;
  /** The socat executable. */
  readonly socat?: string;
  /** How to open the emulator's end (default the native binding; a worker thread passes drivers/can/tty-binding). */
  readonly binding?: BindingInterface;
}

export class PtyEmulator {
  readonly bus: YamBusEmulator;
  adapter: AdapterEmulator;
  private socat: ChildProcess | undefined;
  private port: SerialPort | SerialPortStream | undefined;
  private stopped = false;

  private constructor(private readonly options: PtyEmulatorOptions) {
    this.bus = new YamBusEmulator(options.emulator);
    this.adapter = new AdapterEmulator(options.transport, this.bus, { replyLatencyMs: options.replyLatencyMs });
  }

  static async start(options: PtyEmulatorOptions): Promise<PtyEmulator> {
    const emu = new PtyEmulator(options);
    await emu.plug();
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

  private async plug(): Promise<void> {
    const { link } = this.options;
    if (existsSync(link)) throw new Error(`${link} already exists; another emulator may be running there. Pick another --link or remove it.`);
    const socat = spawn(this.options.socat ?? 'socat', ['-d', '-d', `pty,raw,echo=0,link=${link}`, `pty,raw,echo=0,link=${this.emulatorLink}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    this.socat = socat;
    // If this process dies without stop(), socat must not outlive it holding the link.
    const killOnExit = (): void => void socat.kill('SIGTERM');
    process.once('exit', killOnExit);
    socat.once('exit', () => process.off('exit', killOnExit));
    let stderr = '';
    socat.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const onError = (e: Error) => reject(new Error(`Cannot start socat (${e.message}); install it with 'apt-get install socat'.`));
      socat.once('error', onError);
      const poll = setInterval(() => {
        if (/starting data transfer loop/.test(stderr) && existsSync(link) && existsSync(this.emulatorLink)) {
          clearInterval(poll);
          socat.off('error', onError);
          resolve();
        } else if (socat.exitCode !== null || Date.now() - started > 5000) {
          clearInterval(poll);
          reject(new Error(`socat did not make the pty pair at ${link}: ${stderr.trim().split('\n').pop() ?? 'no output'}`));
        }
      }, 10);
    });
    const settings = { path: this.emulatorLink, baudRate: 921600, autoOpen: false } as const;
    const port = this.options.binding ? new SerialPortStream({ ...settings, binding: this.options.binding }) : new SerialPort(settings);
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    this.port = port;
    const adapter = this.adapter;
    const unsubscribe = adapter.onOutput((bytes) => {
      if (port.isOpen) port.write(bytes);
    });
    port.on('data', (chunk: Buffer) => adapter.write(chunk));
    port.on('close', unsubscribe);
    port.on('error', () => {});
  }

  /** Fault injection: the adapter disappears (socat exits, the host's reads fail). */
  async unplug(): Promise<void> {
    await this.teardown();
  }

  /** The adapter comes back, fresh (SLCAN channel closed); the motors kept their state. */
  async replug(): Promise<void> {
    this.adapter = new AdapterEmulator(this.options.transport, this.bus, { replyLatencyMs: this.adapter.replyLatencyMs });
    await this.plug();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.teardown();
  }

  get running(): boolean {
    return !this.stopped && this.socat !== undefined && this.socat.exitCode === null;
  }

  private async teardown(): Promise<void> {
    this.adapter.dispose();
    const port = this.port;
    this.port = undefined;
    if (port?.isOpen) await new Promise<void>((r) => port.close(() => r()));
    const socat = this.socat;
    this.socat = undefined;
    if (socat && socat.exitCode === null) {
      await new Promise<void>((r) => {
        socat.once('exit', () => r());
        socat.kill('SIGTERM');
      });
    }
  }
}
