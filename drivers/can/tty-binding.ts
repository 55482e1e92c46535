/**
 * A serialport binding (the @serialport/bindings-interface contract) for a thread that is not the
 * process's main thread: the rig thread.
 *
 * Why not the native binding there: @serialport/bindings-cpp registers its read poller on libuv's
 * *default* loop, so in a worker thread the poller fires on the main thread with the worker's
 * N-API environment and Node aborts ("HandleScope … without proper locking"; serialport issues
 * #1981, #2748, bindings-cpp PR #176, unreleased). Node's own tty handle lives on the loop of the
 * thread that made it, so this binding reads through `tty.ReadStream` and writes with a
 * non-blocking write(2) — a full adapter buffer is an error, never a stalled motor loop.
 *
 * Line settings come from stty (coreutils) at open: raw, no echo, the requested baud rate — what
 * the native binding sets through termios. USB CDC adapters (CANable, Damiao USB-CAN) ignore the
 * baud rate; a pty ignores all of it.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { ReadStream, isatty } from 'node:tty';
import { SerialReadQueue } from './serial-read-queue.js';
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  PortStatus,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };

class TtyBindingError extends Error {
  constructor(
    message: string,
    readonly canceled = false,
  ) {
    super(message);
  }
}

class TtyPort implements BindingPortInterface {
  isOpen = true;
  private readonly rx = new SerialReadQueue();
  private failed: Error | undefined;
  private readonly stream: ReadStream;

  constructor(
    readonly openOptions: Required<OpenOptions>,
    private readonly fd: number,
  ) {
    // The tty handle re-opens the device for itself onto this descriptor and owns it from here.
    this.stream = new ReadStream(fd);
    this.stream.on('data', (chunk: Buffer) => this.rx.push(chunk));
    const fail = (e: Error): void => {
      if (!this.isOpen) return;
      this.failed = new TtyBindingError(
        `${e.message || 'EIO: i/o error'}; the device at ${openOptions.path} went away`,
      );
      this.rx.rejectPending(this.failed);
    };
    this.stream.on('error', fail);
    this.stream.on('end', () => fail(new Error('EIO: i/o error, the device closed')));
  }

  read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    if (!this.isOpen) return Promise.reject(new TtyBindingError('Port is not open', true));
    if (this.failed) return Promise.reject(this.failed);
    return this.rx.read(buffer, offset, length);
  }

  async write(buffer: Buffer): Promise<void> {
    if (!this.isOpen) throw new TtyBindingError('Port is not open', true);
    if (this.failed) throw this.failed;
    let off = 0;
    while (off < buffer.length) {
      try {
        off += writeSync(this.fd, buffer, off, buffer.length - off);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN')
          throw new TtyBindingError(
            `EAGAIN: the device at ${this.openOptions.path} is not taking bytes (its buffer is full)`,
          );
        throw new TtyBindingError((e as Error).message);
      }
    }
  }

  async close(): Promise<void> {
    if (!this.isOpen) throw new Error('Port is not open');
    this.isOpen = false;
    this.rx.rejectPending(new TtyBindingError('Port is closed', true));
    this.stream.destroy();
  }

  async update(): Promise<void> {}
  async set(): Promise<void> {}
  async get(): Promise<PortStatus> {
    return { cts: true, dsr: true, dcd: true };
  }
  async getBaudRate(): Promise<{ baudRate: number }> {
    return { baudRate: this.openOptions.baudRate };
  }
  async flush(): Promise<void> {
    this.rx.clear();
  }
  async drain(): Promise<void> {}
}

/** Opens ttys and ptys through Node's tty handles: usable from any thread. */
export const ttyBinding: BindingInterface = {
  async list(): Promise<PortInfo[]> {
    return [];
  },
  async open(options: OpenOptions): Promise<BindingPortInterface> {
    const full: Required<OpenOptions> = {
      dataBits: 8,
      lock: true,
      stopBits: 1,
      parity: 'none',
      rtscts: false,
      xon: false,
      xoff: false,
      xany: false,
      hupcl: true,
      ...options,
    } as Required<OpenOptions>;
    let fd: number;
    try {
      fd = openSync(options.path, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    } catch (e) {
      throw new TtyBindingError(`Error: ${(e as Error).message}, cannot open ${options.path}`);
    }
    try {
      if (!isatty(fd))
        throw new TtyBindingError(
          `Error: ${options.path} is not a serial device (not a tty), cannot open ${options.path}`,
        );
      try {
        execFileSync('stty', ['-F', options.path, 'raw', '-echo', String(options.baudRate)], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
      } catch (e) {
        const why = (e as { stderr?: Buffer }).stderr?.toString().trim() || (e as Error).message;
        throw new TtyBindingError(
          `Error: cannot set ${options.path} to raw at ${options.baudRate} baud (${why}), cannot open ${options.path}`,
        );
      }
      return new TtyPort(full, fd);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  },
};
