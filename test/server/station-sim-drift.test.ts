/**
 * The drift alarm for the Rig page: GET /api/rig/sim-drift on a real `tandem station`, with the
 * thresholds of its station config, says what `tandem report` says with the same config — the
 * same points, the same sentence.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStation } from '../helpers/station-process.js';
import { runTandem } from '../helpers/cli.js';
import { serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { DEFAULT_RIG_CONFIG } from '../../src/app/rig-registry.js';
import { DRIFT_SET, DRIFT_SPECS, fillDriftStore } from '../helpers/drift-store.js';

type Drift = {
  simCalibration: string;
  points: unknown[];
  alarm: { sentence: string; sinceAt: string } | null;
  sentence: string;
};

test("GET /api/rig/sim-drift: per layout set the agreement over time and the alarm, with the station config's thresholds, as tandem report says it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-station-drift-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'station.json');
  writeFileSync(config, JSON.stringify({ version: 1, rig: DEFAULT_RIG_CONFIG, simDrift: { windowEvaluations: 1 } }));
  const station = await startStation({ args: ['--station-config', config] });
  t.after(() => station.dispose());
  const { sessions } = fillDriftStore(join(station.dataDir, 'tandem.sqlite'));

  const body = await station.api<{
    thresholds: Record<string, number>;
    layoutSets: { layoutSet: string; task: string; drift: Drift }[];
    alarms: { layoutSet: string; sentence: string; since: string }[];
  }>('/api/rig/sim-drift');
  assert.deepEqual(body.thresholds, { minPearson: 0.7, maxMmrv: 0.15, maxMeanAbsGap: 0.25, windowEvaluations: 1 });
  assert.deepEqual(
    body.layoutSets.map((l) => [l.layoutSet, l.task]),
    [[DRIFT_SET.sha256, 'bottles-in-the-bin']],
  );
  assert.equal(body.alarms.length, 1);
  assert.match(
    body.alarms[0].sentence,
    new RegExp(
      `^The sim no longer ranks like the rig since session ${sessions[1]} \\(2026-11-03\\): .*; recalibrate with tandem sysid\\.$`,
    ),
  );
  assert.equal(body.alarms[0].since.slice(0, 10), '2026-11-03');

  writeFileSync(join(dir, 'set.json'), serializeLayoutSet(DRIFT_SET));
  const cli = await runTandem([
    'report',
    '--policies',
    DRIFT_SPECS.join(','),
    '--layouts',
    join(dir, 'set.json'),
    '-o',
    join(dir, 'r.html'),
    '--json',
    '--station-config',
    config,
    '--data',
    station.dataDir,
  ]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(body.layoutSets[0].drift, JSON.parse(cli.stdout).simDrift);
});
