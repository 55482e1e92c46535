import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { calibrateProjector } from '../../../calibration/projector/calibration-record.js';
import { LayoutProjector } from '../../../calibration/projector/layout-projector.js';
import { MemoryOutput, PngDirectoryOutput, PngFileOutput } from '../../../calibration/projector/outputs.js';
import { PjlinkClient } from '../../../drivers/projector/pjlink-client.js';
import { PjlinkEmulator } from '../../../drivers/projector/pjlink-emulator.js';
import { sampleLayoutSet } from '../../../src/layouts/layout-set.js';
import { RESOLUTION, simulateAlignment, TABLE_FIDUCIALS_MM, trueHomography } from './projector-geometry.js';

const calibration = calibrateProjector({
  points: simulateAlignment(trueHomography(), TABLE_FIDUCIALS_MM, 1, 5),
  resolution: RESOLUTION,
});
const set = sampleLayoutSet({ task: 'bottles-in-the-bin', tiers: [1, 2], perTier: 1, seed: 9 });

test('show unmutes the projector over PJLink and blank mutes it, each after its frame is out', async () => {
  const emu = new PjlinkEmulator({ poweredOn: true, password: 'pw' });
  const port = await emu.start();
  try {
    const output = new MemoryOutput();
    const projector = new LayoutProjector({
      calibration,
      output,
      control: new PjlinkClient({ host: '127.0.0.1', port, password: 'pw' }),
    });
    assert.deepEqual(await projector.blank(), {});
    assert.equal(emu.state().avMuted, true);
    assert.deepEqual(await projector.show(set, 1), {});
    assert.equal(emu.state().avMuted, false);
    assert.deepEqual(
      output.frames.map((f) => [f.kind, f.layoutIndex, f.layoutSetSha256, f.calibrationSha256]),
      [
        ['blank', undefined, undefined, calibration.sha256],
        ['layout', 1, set.sha256, calibration.sha256],
      ],
    );
    assert.deepEqual(emu.state().commands, ['%1AVMT 31', '%1AVMT 30']);
  } finally {
    await emu.close();
  }
});

test('a projector in standby: the frame still goes out and the problem comes back as a sentence, not a throw', async () => {
  const emu = new PjlinkEmulator();
  const port = await emu.start();
  try {
    const output = new MemoryOutput();
    const projector = new LayoutProjector({
      calibration,
      output,
      control: new PjlinkClient({ host: '127.0.0.1', port }),
    });
    const r = await projector.show(set, 0);
    assert.match(
      r.problem ?? '',
      /^The layout frame is sent but the projector could not be unmuted, so it may not show: The projector at 127\.0\.0\.1:\d+ cannot do 'AVMT 30' right now \(ERR3/,
    );
    assert.equal(output.frames.length, 1);
  } finally {
    await emu.close();
  }
});

test('PNG outputs: one file replaced whole, or a folder of numbered frames', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-projector-'));
  try {
    const file = join(dir, 'current.png');
    const one = new LayoutProjector({ calibration, output: new PngFileOutput(file) });
    await one.show(set, 0);
    await one.blank();
    const meta = await sharp(readFileSync(file)).stats();
    assert.equal(Math.max(...meta.channels.map((c) => c.max)), 0, 'the file holds the last (blank) frame');
    assert.deepEqual(readdirSync(dir), ['current.png'], 'no temp file left behind');
    const frames = join(dir, 'frames');
    const many = new LayoutProjector({ calibration, output: new PngDirectoryOutput(frames) });
    await many.blank();
    await many.show(set, 1);
    assert.deepEqual(readdirSync(frames).sort(), ['frame-000001-blank.png', 'frame-000002-layout-1.png']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
