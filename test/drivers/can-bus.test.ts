// SerialCanBus through the real serialport stream on the in-process emulator binding: round trips,
// garbage, unplug and reconnect without a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until as untilWithin } from '../helpers/until.js';
import { SerialCanBus } from '../../drivers/can/serial-can-bus.js';
import type { CanBusEvent, CanTransport } from '../../drivers/can/bus.js';
import type { CanFrame } from '../../drivers/can/frame.js';
import { EmulatedAdapterDevice, EmulatorBinding } from '../../drivers/emulators/serial-binding.js';
import { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';
import { registerReadFrame, specialFrame } from '../../drivers/damiao/protocol.js';

function setup(transport: CanTransport) {
  const binding = new EmulatorBinding();
  const device = binding.add(new EmulatedAdapterDevice('/emu/can0', transport, new YamBusEmulator()));
  const bus = new SerialCanBus({ transport, path: '/emu/can0', binding, reconnectIntervalMs: 20 });
  const frames: CanFrame[] = [];
  const events: CanBusEvent[] = [];
  bus.onFrame((f) => frames.push(f));
  bus.onEvent((e) => events.push(e));
  return { binding, device, bus, frames, events };
}

for (const transport of ['slcan', 'damiao'] as CanTransport[]) {
  test(`${transport}: all seven motors answer one batched write, register reads come back`, async () => {
    const { bus, frames } = setup(transport);
    await bus.open();
    try {
      bus.send([1, 2, 3, 4, 5, 6, 7].map((id) => specialFrame(id, 'disable')));
      await until(() => frames.length === 7);
      assert.deepEqual(
        frames.map((f) => f.id).sort((a, b) => a - b),
        [0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17],
      );
      bus.send(registerReadFrame(3, 23));
      await until(() => frames.length === 8);
      assert.deepEqual(Array.from(frames[7].data.subarray(0, 4)), [3, 0, 0x33, 23]);
      assert.equal(new DataView(frames[7].data.buffer, frames[7].data.byteOffset + 4, 4).getFloat32(0, true), 28); // DM4340 TMAX
    } finally {
      await bus.close();
    }
  });

  test(`${transport}: garbage and a truncated frame are dropped and reported, the next frames still parse`, async () => {
    const { bus, frames, events, device } = setup(transport);
    await bus.open();
    try {
      device.adapter.injectGarbage();
      device.adapter.injectGarbage(
        transport === 'slcan' ? Buffer.from('t01181180\r', 'latin1') : Buffer.from([0xaa, 0x11, 0x08, 0x11, 0, 0]),
      );
      bus.send(specialFrame(2, 'disable'));
      await until(() => frames.length === 1);
      assert.equal(frames[0].id, 0x12);
      assert.ok(bus.stats.garbageBytes > 0);
      assert.ok(events.some((e) => e.kind === 'garbage' && /not a valid frame/.test(e.message)));
    } finally {
      await bus.close();
    }
  });

  test(`${transport}: an unplug is reported, sends are refused, and the bus reconnects by itself`, async () => {
    const { bus, frames, events, device, binding } = setup(transport);
    // Count the bus's attempts to open the port (its reconnects), through the binding it was given.
    let opens = 0;
    const open = binding.open.bind(binding);
    binding.open = (o) => ((opens += 1), open(o));
    await bus.open();
    try {
      device.unplug();
      await until(() => events.some((e) => e.kind === 'disconnected'));
      assert.equal(bus.connected, false);
      assert.equal(bus.send(specialFrame(1, 'disable')), false);
      assert.match(events.find((e) => e.kind === 'disconnected')!.message, /disconnected \(unplugged or closed\)/);
      const before = opens;
      await until(() => opens >= before + 2); // a few failed reopen attempts while unplugged
      assert.equal(bus.connected, false);
      device.replug();
      await until(() => bus.connected);
      assert.ok(events.some((e) => e.kind === 'reconnected'));
      bus.send(specialFrame(1, 'disable'));
      await until(() => frames.length === 1);
      assert.equal(bus.stats.reconnects, 1);
    } finally {
      await bus.close();
    }
  });
}

const until = (cond: () => boolean, timeoutMs = 2000): Promise<void> => untilWithin(cond, timeoutMs, 2);

test('SLCAN on an adapter that is not SLCAN fails to open with a reason, not a hang', async () => {
  const binding = new EmulatorBinding();
  binding.add(new EmulatedAdapterDevice('/emu/dm', 'damiao', new YamBusEmulator()));
  const bus = new SerialCanBus({ transport: 'slcan', path: '/emu/dm', binding, setupTimeoutMs: 100 });
  await assert.rejects(bus.open(), /did not answer the SLCAN command 'C'.*--transport/);
  const missing = new SerialCanBus({ transport: 'slcan', path: '/emu/none', binding });
  await assert.rejects(
    missing.open(),
    /Could not open SLCAN adapter on \/emu\/none: .*Check the cable and the --port path/,
  );
});
