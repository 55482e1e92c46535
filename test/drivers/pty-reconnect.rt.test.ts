// Reconnect without a restart on a real tty path: the socat pty disappears (unplug) and comes back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until as untilWithin } from '../helpers/until.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PtyEmulator } from '../../drivers/emulators/pty.js';
import { SerialCanBus } from '../../drivers/can/serial-can-bus.js';
import type { CanBusEvent } from '../../drivers/can/bus.js';
import { specialFrame } from '../../drivers/damiao/protocol.js';

const until = (cond: () => boolean, timeoutMs = 15_000): Promise<void> => untilWithin(cond, timeoutMs, 5);

test('SerialCanBus on a pty: unplug is reported, and the same path reopens by itself when the adapter is back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-reconnect-'));
  const emu = await PtyEmulator.start({ transport: 'slcan', link: join(dir, 'can0') });
  const bus = new SerialCanBus({ transport: 'slcan', path: emu.link, reconnectIntervalMs: 50 });
  const events: CanBusEvent[] = [];
  let replies = 0;
  bus.onEvent((e) => events.push(e));
  bus.onFrame(() => replies++);
  try {
    await bus.open();
    bus.send(specialFrame(1, 'disable'));
    await until(() => replies === 1);
    await emu.unplug();
    await until(() => events.some((e) => e.kind === 'disconnected'));
    assert.equal(bus.send(specialFrame(1, 'disable')), false);
    await emu.replug();
    await until(() => bus.connected);
    assert.ok(events.some((e) => e.kind === 'reconnected'));
    bus.send(specialFrame(1, 'disable'));
    await until(() => replies === 2);
  } finally {
    await bus.close();
    await emu.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
