/**
 * Two emulated YAM arms on socat ptys, in a thread of their own: the "hardware" side of tests and
 * benchmarks that block the station's main thread, so the motors' own record (every MIT frame's
 * arrival, the motor watchdog) is kept on a clock the block does not touch.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PtyEmulator } from '../../drivers/emulators/pty.js';
import { ttyBinding } from '../../drivers/can/tty-binding.js';
import { STATUS_LOST_COMMUNICATION } from '../../drivers/damiao/protocol.js';
import type { ArmSide } from '../../src/rig/contract.js';
import type { EmulatedBusFault } from '../../drivers/emulators/yam-bus-emulator.js';
import type { EmulatorThreadInit, EmulatorThreadRequest, MotorRecord } from './emulator-thread.js';

const init = workerData as EmulatorThreadInit;
const arms = new Map<ArmSide, PtyEmulator>();
interface Rec {
  /** Epoch ms of the first command without stiffness after stiff ones (an e-stop's damping reaching the motor). */
  dampedAtEpochMs: number;
  stiff: boolean;
  enabledAtLast: boolean;
  lastMitMs: number;
  longestGapMs: number;
  mits: number;
  everLost: boolean;
}
const records = new Map<string, Rec>();

/** Fresh arms (motors at rest, no faults, records cleared) on the same links. */
async function startArms(): Promise<void> {
  for (const [side, link] of Object.entries(init.links) as [ArmSide, string][]) {
    const emu = await PtyEmulator.start({
      transport: init.transport,
      link,
      binding: ttyBinding,
      replyLatencyMs: init.replyLatencyMs,
    });
    arms.set(side, emu);
    for (const m of emu.bus.motors.values()) {
      const rec: Rec = {
        dampedAtEpochMs: NaN,
        stiff: false,
        enabledAtLast: false,
        lastMitMs: NaN,
        longestGapMs: 0,
        mits: 0,
        everLost: false,
      };
      records.set(`${side}/${m.id}`, rec);
      m.onMit((command, accepted) => {
        const now = performance.now();
        if (accepted && command.kp > 0) rec.stiff = true;
        else if (accepted && rec.stiff && rec.dampedAtEpochMs !== rec.dampedAtEpochMs)
          rec.dampedAtEpochMs = performance.timeOrigin + now;
        // Gaps count from a command the motor took while powered: that is when a gap lets its watchdog trip.
        if (rec.enabledAtLast && rec.lastMitMs === rec.lastMitMs)
          rec.longestGapMs = Math.max(rec.longestGapMs, now - rec.lastMitMs);
        rec.lastMitMs = now;
        rec.enabledAtLast = accepted;
        rec.mits++;
      });
    }
  }
}
await startArms();

// The motor watchdog is judged when the motor next hears something; look every 5 ms as well so a
// motor left alone is seen damping on time.
const watch = setInterval(() => {
  for (const [side, emu] of arms) {
    emu.bus.advanceAll();
    for (const m of emu.bus.motors.values())
      if (m.status === STATUS_LOST_COMMUNICATION) records.get(`${side}/${m.id}`)!.everLost = true;
  }
}, 5);

function status(): Record<string, unknown> {
  const out: Partial<Record<ArmSide, MotorRecord[]>> = {};
  for (const [side, emu] of arms) {
    emu.bus.advanceAll();
    out[side] = [...emu.bus.motors.values()].map((m) => {
      const r = records.get(`${side}/${m.id}`)!;
      if (m.status === STATUS_LOST_COMMUNICATION) r.everLost = true;
      return {
        id: m.id,
        status: m.status,
        kp: m.lastCommand.kp,
        kd: m.lastCommand.kd,
        mits: r.mits,
        longestGapMs: r.longestGapMs,
        everLost: r.everLost,
        dampedAtEpochMs: r.dampedAtEpochMs,
      };
    });
  }
  return { motors: out, framesReceived: Object.fromEntries([...arms].map(([s, e]) => [s, e.bus.framesReceived])) };
}

parentPort!.on('message', (m: EmulatorThreadRequest) => {
  void (async () => {
    switch (m.op) {
      case 'status':
        parentPort!.postMessage({ id: m.id, value: status() });
        return;
      case 'reset-records':
        for (const r of records.values())
          Object.assign(r, {
            dampedAtEpochMs: NaN,
            stiff: false,
            enabledAtLast: false,
            lastMitMs: NaN,
            longestGapMs: 0,
            mits: 0,
            everLost: false,
          });
        parentPort!.postMessage({ id: m.id });
        return;
      case 'inject':
        arms.get(m.side!)!.bus.inject(m.fault as EmulatedBusFault);
        parentPort!.postMessage({ id: m.id });
        return;
      case 'unplug':
        await arms.get(m.side!)!.unplug();
        parentPort!.postMessage({ id: m.id });
        return;
      case 'replug':
        await arms.get(m.side!)!.replug();
        parentPort!.postMessage({ id: m.id });
        return;
      case 'reset':
        for (const emu of arms.values()) await emu.stop();
        arms.clear();
        await startArms();
        parentPort!.postMessage({ id: m.id });
        return;
      case 'stop':
        clearInterval(watch);
        for (const emu of arms.values()) await emu.stop();
        parentPort!.postMessage({ id: m.id });
        return;
    }
  })();
});
parentPort!.postMessage({ ready: true });
