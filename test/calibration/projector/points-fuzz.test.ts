/**
 * Property tests of projector calibration points (fast-check, fixed seed) and their checked-in
 * corpus (test/fixtures/fuzz/projector-points.json): any points file is read or refused in one
 * sentence, and any points that are read either fit a homography with finite numbers throughout
 * or are refused with a ProjectorCalibrationError — never NaN in a stored calibration, never a crash.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { parsePointsFile } from '../../../src/app/commands/projector.js';
import { UserError } from '../../../src/app/command.js';
import { calibrateProjector } from '../../../calibration/projector/calibration-record.js';
import { ProjectorCalibrationError } from '../../../calibration/projector/homography.js';
import { PROJECT_ROOT } from '../../helpers/cli.js';

const SEED = 1080;
const RESOLUTION = { widthPx: 1920, heightPx: 1080 };

/** Reads and calibrates; true when a calibration came out (checked finite), false when refused in one sentence. */
function readAndFit(text: string): boolean {
  let points;
  try {
    points = parsePointsFile(text, 'points.json').points;
  } catch (e) {
    assert.ok(e instanceof UserError, `the points parser threw ${(e as Error)?.name}: ${(e as Error)?.message}`);
    return false;
  }
  try {
    const c = calibrateProjector({ points, resolution: RESOLUTION, createdAt: '2026-01-01T00:00:00.000Z' });
    assert.ok(c.tableToProjector.every(Number.isFinite), `a homography with ${c.tableToProjector.join(', ')}`);
    assert.ok(
      Number.isFinite(c.errors.rmsMm ?? 0) && c.errors.perPoint.every((p) => Number.isFinite(p.mm)),
      JSON.stringify(c.errors),
    );
    return true;
  } catch (e) {
    assert.ok(
      e instanceof ProjectorCalibrationError,
      `calibration threw ${(e as Error)?.name}: ${(e as Error)?.message}`,
    );
    assert.ok(!e.message.includes('\n') && e.message.length < 400, e.message);
    return false;
  }
}

test('the checked-in corpus reads and fits as recorded', () => {
  const corpus = JSON.parse(readFileSync(join(PROJECT_ROOT, 'test/fixtures/fuzz/projector-points.json'), 'utf8')) as {
    name: string;
    text: string;
    fits: boolean;
  }[];
  for (const c of corpus) assert.equal(readAndFit(c.text), c.fits, c.name);
});

const coord = fc.oneof(
  fc.double({ min: -2000, max: 2000, noNaN: true }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, 1e308, -1e308, 5e-324),
);
const pixel = fc.oneof(fc.double({ min: 0, max: 1920, noNaN: true }), fc.constantFrom(0, 1920, 1080, 1e308));
const point = fc.record({ tableMm: fc.tuple(coord, coord), projectorPx: fc.tuple(pixel, pixel) });

test('any points: a finite calibration or one ProjectorCalibrationError sentence', () => {
  fc.assert(
    fc.property(fc.array(point, { minLength: 0, maxLength: 9 }), (points) => {
      readAndFit(JSON.stringify({ points }));
    }),
    { seed: SEED, numRuns: 400 },
  );
});

test('near-valid tables (four corners, jittered and with extra points): a finite calibration or a refusal', () => {
  const corner = (x: number, y: number, u: number, v: number) =>
    fc.record({
      tableMm: fc.tuple(
        fc.double({ min: x - 30, max: x + 30, noNaN: true }),
        fc.double({ min: y - 30, max: y + 30, noNaN: true }),
      ),
      projectorPx: fc.tuple(
        fc.double({ min: Math.max(0, u - 30), max: u + 30, noNaN: true }),
        fc.double({ min: Math.max(0, v - 30), max: v + 30, noNaN: true }),
      ),
    });
  fc.assert(
    fc.property(
      fc.tuple(
        corner(0, 0, 100, 100),
        corner(800, 0, 1800, 120),
        corner(800, 600, 1780, 1000),
        corner(0, 600, 110, 980),
      ),
      fc.array(point, { maxLength: 3 }),
      (corners, extra) => {
        readAndFit(JSON.stringify({ points: [...corners, ...extra] }));
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
});

test('any JSON as a points file: read or one UserError sentence', () => {
  fc.assert(
    fc.property(fc.oneof(fc.json({ maxDepth: 5 }), fc.string({ maxLength: 100 })), (text) => {
      readAndFit(text);
    }),
    { seed: SEED, numRuns: 300 },
  );
});
