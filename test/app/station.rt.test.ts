import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';

test('tandem station brings up the embedded default: store, the emulated cell under the loop with a bottles layout on its table, sim twin', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = await runTandem(['station', '--check', '--data', dir, '--hold-seconds', '0.5', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.dataDir, dir);
  assert.ok(existsSync(join(dir, 'tandem.sqlite')), 'the store is a real SQLite file in the data dir');
  assert.equal(report.rig.type, 'yam-cell');
  assert.equal(report.cell.task, 'bottles-in-the-bin');
  assert.ok(report.cell.objects >= 1, 'objects stand on the cell table');
  assert.match(report.cell.truthSha256, /^[0-9a-f]{64}$/);
  assert.ok(report.rig.cycles > 10, `the control loop ran (${report.rig.cycles} cycles)`);
  assert.deepEqual(report.rig.faults, []);
  assert.match(report.sim.engine, /Rapier/);
  assert.match(report.sim.calibrationSha256, /^[0-9a-f]{64}$/);
  assert.match(report.ros, /ROS 2/);
});

test('tandem station with an unknown rig type says which types it knows', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = join(dir, 'rig.json');
  writeFileSync(cfg, JSON.stringify({ type: 'warp-drive' }));
  const r = await runTandem(['station', '--data', dir, '--rig-config', cfg]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Unknown rig type 'warp-drive'.*yam-can.*yam-cell.*yam-emulated/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});
