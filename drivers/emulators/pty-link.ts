/**
 * Any emulated byte device on a real pseudo-terminal pair made by socat:
 *   socat -d -d pty,raw,echo=0,link=LINK pty,raw,echo=0,link=LINK.emulator
 * A host program opens LINK as it would open /dev/ttyACM0; the emulator's bytes go through
 * LINK.emulator with the native serialport binding. Used for the CAN adapters (pty.ts) and the
 * leader arms (a YAM leader's adapter, a GELLO's Dynamixel line). unplug() kills socat, so the
 * host sees the same I/O error as a pulled USB cable.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { SerialPort } from 'serialport';
import { SerialPortStream } from '@serialport/stream';
import type { BindingInterface } from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { ByteEndpoint } from './serial-binding.js';

export interface PtyLinkOptions {
  /** Path the host opens, e.g. /tmp/yam-left. */
  readonly link: string;
  /** The socat executable. */
  readonly socat?: string;
  /** How to open the emulator's end (default the native binding; a worker thread passes drivers/can/tty-binding). */
  readonly binding?: BindingInterface;
}

/** Why `link` cannot be served, as one sentence; undefined when it can. */
export function ptyLinkProblem(link: string): string | undefined {
  if (existsSync(link))
    return `${link} already exists; another emulator may be running there. Pick another --link or remove it.`;
  const dir = dirname(link);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // missing: said below
  }
  if (!isDir) return `The folder ${dir} for the pty ${link} does not exist; create it or pick another --link.`;
  return undefined;
}

export class PtyLink {
  private socat: ChildProcess | undefined;
  private port: SerialPort | SerialPortStream | undefined;
  private stopped = false;

  private constructor(
    private readonly options: PtyLinkOptions,
    private endpoint: ByteEndpoint,
  ) {}

  /** Makes the pty pair and connects `endpoint` to its emulator end; rejects with one sentence. */
  static async start(options: PtyLinkOptions, endpoint: ByteEndpoint): Promise<PtyLink> {
    const link = new PtyLink(options, endpoint);
    await link.plug();
    return link;
  }

  get link(): string {
    return this.options.link;
  }

  get emulatorLink(): string {
    return `${this.options.link}.emulator`;
  }

  get running(): boolean {
    return !this.stopped && this.socat !== undefined && this.socat.exitCode === null;
  }

  private async plug(): Promise<void> {
    const { link } = this.options;
    const problem = ptyLinkProblem(link);
    if (problem) throw new Error(problem);
    const socat = spawn(
      this.options.socat ?? 'socat',
      ['-d', '-d', `pty,raw,echo=0,link=${link}`, `pty,raw,echo=0,link=${this.emulatorLink}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.socat = socat;
    // If this process dies without stop(), socat must not outlive it holding the link.
    const killOnExit = (): void => void socat.kill('SIGTERM');
    process.once('exit', killOnExit);
    socat.once('exit', () => process.off('exit', killOnExit));
    let stderr = '';
    socat.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const onError = (e: Error) =>
        reject(new Error(`Cannot start socat (${e.message}); install it with 'apt-get install socat'.`));
      socat.once('error', onError);
      const poll = setInterval(() => {
        if (/starting data transfer loop/.test(stderr) && existsSync(link) && existsSync(this.emulatorLink)) {
          clearInterval(poll);
          socat.off('error', onError);
          resolve();
        } else if (socat.exitCode !== null || Date.now() - started > 5000) {
          clearInterval(poll);
          reject(
            new Error(`socat did not make the pty pair at ${link}: ${stderr.trim().split('\n').pop() ?? 'no output'}`),
          );
        }
      }, 10);
    });
    const settings = { path: this.emulatorLink, baudRate: 921600, autoOpen: false } as const;
    const port = this.options.binding
      ? new SerialPortStream({ ...settings, binding: this.options.binding })
      : new SerialPort(settings);
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    this.port = port;
    const endpoint = this.endpoint;
    const unsubscribe = endpoint.onOutput((bytes) => {
      if (port.isOpen) port.write(bytes);
    });
    port.on('data', (chunk: Buffer) => endpoint.write(chunk));
    port.on('close', unsubscribe);
    port.on('error', () => {});
  }

  /** Fault injection: the device disappears (socat exits, the host's reads fail). */
  async unplug(): Promise<void> {
    await this.teardown();
  }

  /** The device comes back with `endpoint` behind it (a freshly powered adapter, or the same one). */
  async replug(endpoint: ByteEndpoint = this.endpoint): Promise<void> {
    this.endpoint = endpoint;
    await this.plug();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.teardown();
  }

  private async teardown(): Promise<void> {
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
