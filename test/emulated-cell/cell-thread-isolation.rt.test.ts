// The wall-clock emulated cell runs as hardware does: its world and bus emulators in the cell's own
// thread, the rig in a rig thread. A station main thread blocked 500 ms at a time (a GC pause, a
// big synchronous request) neither stops the world nor starves its motors: the world steps through
// each block, no motor goes as long as its own 400 ms watchdog without a command, and the rig stays
// active without a fault — the supervisor holds at each block, as on the yam-can rig thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RealtimeClock } from '../../src/rig/clocks.js';
import { ControlLoop } from '../../src/rig/control-loop.js';
import type { RigCommand } from '../../src/rig/contract.js';
import { createCellRig, emulatedCellOf } from '../../src/emulated-cell/register.js';
import { SharedCellWorld } from '../../src/emulated-cell/shared-cell-world.js';
import { RigThreadProxy } from '../../src/rig/rig-thread-proxy.js';

function busyMs(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test("a main thread blocked 500 ms at a time neither stops the wall-clock cell's world nor starves its motors", async (t) => {
  const clock = new RealtimeClock();
  const rig = await createCellRig(
    { type: 'yam-cell', transport: 'slcan', gap: 'none', replyDeadlineMs: 350, threaded: true },
    { clock },
  );
  try {
    const cell = emulatedCellOf(rig)!;
    await rig.configure();
    await rig.activate();
    const hold: RigCommand = { position: Float64Array.from(rig.read().position) };
    // `rig hold`'s loop on this thread, which blocks 500 ms three times, 0.2 s apart.
    const startS = clock.nowS();
    const worldDuringBlocksS: number[] = [];
    const loop = new ControlLoop({
      rig,
      clock,
      source: (_state, _cycle, nowS) => {
        if (worldDuringBlocksS.length < 3 && nowS - startS > 0.2 + worldDuringBlocksS.length * 0.7) {
          const before = cell.world.timing().worldS;
          busyMs(500);
          worldDuringBlocksS.push(cell.world.timing().worldS - before);
        }
        return hold;
      },
    });
    await loop.run({ untilS: startS + 2.4 });
    assert.equal(worldDuringBlocksS.length, 3);
    t.diagnostic(
      `world time stepped during each 500 ms block: ${worldDuringBlocksS.map((x) => x.toFixed(3)).join(', ')} s`,
    );
    for (const s of worldDuringBlocksS)
      assert.ok(
        s > 0.4,
        `the world stepped through a 500 ms block of the main thread (it stepped ${worldDuringBlocksS.map((x) => x.toFixed(3)).join(', ')} s)`,
      );
    const state = rig.read();
    assert.deepEqual(state.faults, [], 'no fault: no motor lost communication, the world kept up with real time');
    assert.equal(state.mode, 'active', 'back to following commands after the last block');
    assert.ok(
      cell.world instanceof SharedCellWorld && rig instanceof RigThreadProxy,
      "the world runs in the cell's thread, the rig in a rig thread",
    );
    const motors = cell.world.motorRecord();
    t.diagnostic(
      `longest gap between commands to a motor: ${motors.longestCommandGapMs.toFixed(1)} ms; motor watchdog trips: ${motors.watchdogTrips}`,
    );
    assert.equal(
      motors.watchdogTrips,
      0,
      `no motor damped by its own watchdog (longest gap between commands ${motors.longestCommandGapMs.toFixed(0)} ms)`,
    );
    assert.ok(
      motors.longestCommandGapMs < 400,
      `no motor went as long as its watchdog without a command: ${motors.longestCommandGapMs.toFixed(0)} ms`,
    );
    // The blocks were real, and the supervisor saw the commands go stale: it held, as designed.
    const stats = await (rig as RigThreadProxy).loopStats();
    assert.ok(stats.watchdogHolds >= 3, `the supervisor held at each block (${stats.watchdogHolds} holds)`);
    await rig.deactivate();
  } finally {
    await rig.close?.();
  }
});
