/**
 * An in-process serialport binding (the @serialport/bindings-interface contract, like
 * @serialport/binding-mock) whose ports are emulated CAN adapters speaking the real bytes. The station's
 * embedded default and the fast tests run the unchanged SerialCanBus on it; unplug/replug are real
 * disconnections as the serialport stream sees them.
 */
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
  PortStatus,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import type { CanTransport } from '../can/bus.js';
import { SerialReadQueue } from '../can/serial-read-queue.js';
import type { ClockTimer } from '../../src/rig/contract.js';
import { AdapterEmulator } from './adapter-emulator.js';
import type { YamBusEmulator } from './yam-bus-emulator.js';

class BindingError extends Error {
  constructor(
    message: string,
    readonly canceled = false,
  ) {
    super(message);
  }
}

/** One emulated USB adapter that can be plugged in and pulled out. */
export class EmulatedAdapterDevice implements EmulatedSerialDevice {
  adapter: AdapterEmulator;
  plugged = true;
  private port: EmulatedPort | undefined;
  private replyLatencyMs: number;
  private readonly timer: ClockTimer | undefined;

  constructor(
    readonly path: string,
    readonly transport: CanTransport,
    readonly bus: YamBusEmulator,
    options: { replyLatencyMs?: number; timer?: ClockTimer } = {},
  ) {
    this.replyLatencyMs = options.replyLatencyMs ?? 0;
    this.timer = options.timer;
    this.adapter = new AdapterEmulator(transport, bus, { replyLatencyMs: this.replyLatencyMs, timer: this.timer });
  }

  setReplyLatencyMs(ms: number): void {
    this.replyLatencyMs = ms;
    this.adapter.replyLatencyMs = ms;
  }

  /** Fault injection: the cable is pulled. The open port fails its reads as a real tty does. */
  unplug(): void {
    this.plugged = false;
    this.port?.disconnect();
    this.port = undefined;
    this.adapter.dispose();
  }

  /** The adapter comes back powered up fresh (SLCAN channel closed); the motors kept their state. */
  replug(): void {
    this.adapter = new AdapterEmulator(this.transport, this.bus, {
      replyLatencyMs: this.replyLatencyMs,
      timer: this.timer,
    });
    this.plugged = true;
  }

  /** @internal */
  connect(options: Required<OpenOptions>): EmulatedPort {
    this.port?.disconnect();
    this.port = new EmulatedPort(options, this.adapter);
    return this.port;
  }
}

/** The byte side of an emulated USB device: what the host writes goes in, what it reads comes out. */
export interface ByteEndpoint {
  write(bytes: Uint8Array): void;
  onOutput(listener: (bytes: Buffer) => void): () => void;
}

/** Anything the binding can open by path: an emulated CAN adapter, an emulated Dynamixel chain. */
export interface EmulatedSerialDevice {
  readonly path: string;
  readonly plugged: boolean;
  connect(options: Required<OpenOptions>): BindingPortInterface;
}

export class EmulatedPort implements BindingPortInterface {
  isOpen = true;
  private unplugged = false;
  private readonly rx = new SerialReadQueue();
  private readonly unsubscribe: () => void;

  constructor(
    readonly openOptions: Required<OpenOptions>,
    private readonly adapter: ByteEndpoint,
  ) {
    this.unsubscribe = adapter.onOutput((bytes) => {
      if (this.isOpen) this.rx.push(bytes);
    });
  }

  read(buffer: Buffer, offset: number, length: number): Promise<{ buffer: Buffer; bytesRead: number }> {
    if (!this.isOpen) return Promise.reject(new BindingError('Port is not open', true));
    if (this.unplugged) return Promise.reject(new BindingError('EIO: i/o error, device unplugged'));
    return this.rx.read(buffer, offset, length);
  }

  async write(buffer: Buffer): Promise<void> {
    if (!this.isOpen) throw new BindingError('Port is not open', true);
    if (this.unplugged) throw new BindingError('EIO: i/o error, device unplugged');
    // Copy: the caller may reuse its buffer once the write resolves.
    this.adapter.write(Buffer.from(buffer));
  }

  async close(): Promise<void> {
    if (!this.isOpen) throw new Error('Port is not open');
    this.isOpen = false;
    if (!this.unplugged) this.unsubscribe();
    this.rx.rejectPending(new BindingError('Port is closed', true));
  }

  /** An unplug: in-flight reads fail with a non-canceled error, which the stream treats as a disconnect. */
  disconnect(): void {
    if (!this.isOpen || this.unplugged) return;
    // Like a real tty: the descriptor stays open (isOpen) until the stream closes it; I/O fails.
    this.unplugged = true;
    this.unsubscribe();
    this.rx.rejectPending(new BindingError('EIO: i/o error, device unplugged'));
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

/** The binding: a registry of emulated adapters by path. */
export class EmulatorBinding implements BindingInterface {
  private readonly devices = new Map<string, EmulatedSerialDevice>();

  add<D extends EmulatedSerialDevice>(device: D): D {
    this.devices.set(device.path, device);
    return device;
  }

  device(path: string): EmulatedAdapterDevice | undefined {
    const d = this.devices.get(path);
    return d instanceof EmulatedAdapterDevice ? d : undefined;
  }

  async list(): Promise<PortInfo[]> {
    return [...this.devices.values()]
      .filter((d) => d.plugged)
      .map((d) => ({
        path: d.path,
        manufacturer: 'tandem emulator',
        serialNumber: undefined,
        pnpId: undefined,
        locationId: undefined,
        productId: undefined,
        vendorId: undefined,
      }));
  }

  async open(options: OpenOptions): Promise<BindingPortInterface> {
    const device = this.devices.get(options.path);
    if (!device || !device.plugged) throw new Error(`ENOENT: no such file or directory, cannot open ${options.path}`);
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
    };
    return device.connect(full);
  }
}
