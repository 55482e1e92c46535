/**
 * Serial bytes between two threads of one process: the host's side is a serialport binding (the
 * @serialport/bindings-interface contract) whose ports are MessagePorts, the device's side an
 * emulated adapter answering on the other end. The emulated cell's rig thread opens its two
 * adapters this way while the cell's own thread runs the adapters, their motors and the world —
 * the same bytes a USB cable carries, with no pty and no main thread in between.
 */
import type { MessagePort } from 'node:worker_threads';
import type {
  BindingInterface,
  BindingPortInterface,
  OpenOptions,
  PortInfo,
} from '@serialport/bindings-interface' with { 'resolution-mode': 'require' };
import { EmulatedPort, type ByteEndpoint } from './serial-binding.js';
import type { AdapterEmulator } from './adapter-emulator.js';

/**
 * An exact-size copy: posting a view copies its whole ArrayBuffer, and small Buffers share an
 * 8 KiB pool.
 */
function own(bytes: Uint8Array): Uint8Array {
  return Uint8Array.prototype.slice.call(bytes);
}

/** One end of a byte pipe over a MessagePort. */
function portEndpoint(port: MessagePort): ByteEndpoint {
  return {
    write: (bytes) => port.postMessage(own(bytes)),
    onOutput: (listener) => {
      const on = (m: Uint8Array): void => listener(Buffer.from(m.buffer, m.byteOffset, m.byteLength));
      port.on('message', on);
      return () => port.off('message', on);
    },
  };
}

/** The host's binding: each path is a MessagePort to an adapter in another thread. */
export class MessagePortBinding implements BindingInterface {
  constructor(private readonly ports: ReadonlyMap<string, MessagePort>) {}

  async list(): Promise<PortInfo[]> {
    return [...this.ports.keys()].map((path) => ({
      path,
      manufacturer: 'tandem emulator',
      serialNumber: undefined,
      pnpId: undefined,
      locationId: undefined,
      productId: undefined,
      vendorId: undefined,
    }));
  }

  async open(options: OpenOptions): Promise<BindingPortInterface> {
    const port = this.ports.get(options.path);
    if (!port) throw new Error(`ENOENT: no such file or directory, cannot open ${options.path}`);
    return new EmulatedPort(
      {
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
      },
      portEndpoint(port),
    );
  }
}

/** The device's side: the adapter takes what the host writes on `port` and answers on it. Returns a stop. */
export function serveAdapterOnPort(adapter: AdapterEmulator, port: MessagePort): () => void {
  const fromHost = (m: Uint8Array): void => adapter.write(m);
  port.on('message', fromHost);
  const off = adapter.onOutput((bytes) => port.postMessage(own(bytes)));
  return () => {
    port.off('message', fromHost);
    off();
    adapter.dispose();
    port.close();
  };
}
