/**
 * System identification proven on the emulated cell: teleop takes recorded through the real
 * drivers on a gapped cell (seed 3), `tandem sysid fit` on them, and the fit checked against the
 * cell's hidden truth — which only this test reads, after the fit (the fit never sees it).
 * The follower is the gapped cell on virtual time (a yam-cell rig config with clock "virtual"):
 * its takes do not depend on how busy the machine is, and a take the fit leaves out is a failure.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { cellTruth } from '../../src/emulated-cell/cell-truth.js';

const GAP = 3;
const TAKES = 4;

interface FitJson {
  heldOut: { beforeAll: number; afterAll: number; before: number[]; after: number[] };
  parameters: { name: string; start: number; fitted: number; sigma: number; identified: boolean; minor: boolean }[];
  excluded: { file: string; reason: string }[];
  calibrationSha256: string;
}

test('teleop takes on a gapped cell → sysid fit: held-out error at least halves and what the fit identifies moves toward the cell truth', { timeout: 1_200_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-sysid-cell-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const excite = await runTandem(['sysid', 'excite', '--seconds', '90', '--seed', '1', '-o', 'traj.json'], { cwd: dir });
  assert.equal(excite.code, 0, excite.stderr);
  writeFileSync(join(dir, 'cell.json'), JSON.stringify({ type: 'yam-cell', transport: 'slcan', gap: `seed:${GAP}`, clock: 'virtual' }));
  const rec = await runTandem(
    ['teleop', 'record', '--leader', 'emulated-yam', '--follower', 'cell.json', '--task', 'bottles-in-the-bin', '--empty-table', '--trajectory', 'traj.json', '--episodes', String(TAKES), '--seconds', '6', '--reset', '0.5', '--out', 'takes', '--data', 'data'],
    { cwd: dir, timeoutMs: 240_000 },
  );
  assert.equal(rec.code, 0, rec.stderr);
  const files = readdirSync(join(dir, 'takes')).filter((f) => f.endsWith('.mcap')).map((f) => join('takes', f));
  assert.equal(files.length, TAKES, `one episode file per take: ${files.join(', ')}`);
  const check = await runTandem(['sysid', 'check', ...files, '--json'], { cwd: dir, timeoutMs: 300_000 });
  assert.equal(check.code, 0, check.stderr);
  const c = JSON.parse(check.stdout) as { episodes: { file: string }[]; excluded: { reason: string }[] };
  assert.deepEqual(c.excluded, [], 'every take is usable');
  const usable = c.episodes.map((e) => e.file);
  // A quicker fit than the default (4 iterations, one start), on 2 workers so the descent is the
  // same on every machine (the LM tries one step size per worker).
  const fit = await runTandem(['sysid', 'fit', ...usable, '--holdout', '1', '--iterations', '4', '--starts', '1', '--workers', '2', '-o', 'fit.json', '--plot', 'fit.svg', '--json'], { cwd: dir, timeoutMs: 900_000 });
  assert.equal(fit.code, 0, fit.stderr);
  const r = JSON.parse(fit.stdout) as FitJson;
  t.diagnostic(`held out: ${(r.heldOut.beforeAll * 1000).toFixed(2)} → ${(r.heldOut.afterAll * 1000).toFixed(2)} mrad on ${usable.length} usable takes`);
  // (a) Held-out tracking error at least halves.
  assert.ok(r.heldOut.afterAll <= r.heldOut.beforeAll / 2, `held-out RMS ${r.heldOut.beforeAll} → ${r.heldOut.afterAll}`);
  // (b) Against the truth the fit never read.
  const truth = cellTruth({ kind: 'seed', seed: GAP }).truth;
  const truthOf = (name: string): number => {
    const m = /^joint(\d)\.(\w+)$/.exec(name);
    if (m) {
      const j = Number(m[1]) - 1;
      return m[2] === 'motorTorqueScale' ? truth.motorTorqueScale[j] : (truth.physics.joints[j] as unknown as Record<string, number>)[m[2]];
    }
    if (name === 'commandLatencyS') return truth.replyLatencyMs / 1000;
    if (name === 'fingerReflectedMassKg') return truth.physics.fingerReflectedMassKg ?? 0;
    throw new Error(`no truth for ${name}`);
  };
  const identified = r.parameters.filter((p) => p.identified);
  t.diagnostic(`identified: ${identified.map((p) => `${p.name} ${p.start} → ${p.fitted.toPrecision(3)} ± ${p.sigma.toPrecision(2)} (truth ${truthOf(p.name).toPrecision(3)})`).join('; ')}`);
  const reflected = r.parameters.find((p) => p.name === 'fingerReflectedMassKg')!;
  // The gap's largest part: found, within a quarter of the truth (runs on this machine: 0.51–0.62 kg against 0.60).
  assert.ok(reflected.identified && Math.abs(reflected.fitted - truthOf(reflected.name)) < 0.25 * truthOf(reflected.name), `reflected mass ${reflected.fitted}`);
  // The parameters that carry the gap (the hand's moving mass, the loaded joints' torque constants,
  // the latency when identified): each closer to the truth than it started, or within 3σ of it.
  // Not asserted one by one: the wrist's small damping and armature terms. On the cell they come out
  // "identified" yet several σ off, consistently across takes — they soak up what the twin does not
  // model (the MIT frames' quantisation, the adapters' reply timing); docs/sysid.md says so.
  for (const p of identified.filter((q) => /^(fingerReflectedMassKg|joint[234]\.motorTorqueScale|commandLatencyS)$/.test(q.name))) {
    const tv = truthOf(p.name);
    assert.ok(Math.abs(p.fitted - tv) <= Math.max(3 * p.sigma, Math.abs(p.start - tv)), `${p.name}: ${p.fitted} ± ${p.sigma} is neither closer to the truth ${tv} than ${p.start} nor within 3σ of it`);
  }
  // The record is one `--calibration` takes, and the plot names the joint it shows.
  const cal = await runTandem(['sim', 'calibration', '--calibration', 'fit.json'], { cwd: dir });
  assert.equal(cal.code, 0, cal.stderr);
  assert.match(cal.stderr + cal.stdout, new RegExp(r.calibrationSha256));
  const svg = readFileSync(join(dir, 'fit.svg'), 'utf8');
  assert.match(svg, /^<svg[\s\S]*(left|right)_joint\d on held-out [\s\S]*<\/svg>$/);
});
