// The sim cameras on the sim's own snapshots: every task's catalogue draws, and objects the
// physics moved show where the physics put them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { ChromiumRenderer } from '../../../src/sim/render/chromium-renderer.js';
import { DEFAULT_CAMERA_CALIBRATION } from '../../../src/sim/render/camera-calibration.js';
import { projectToPixel } from '../../../src/sim/render/camera-projection.js';
import { createScene } from '../../../src/sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../../../src/sim/calibration.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { allTasks } from '../../../src/tasks/registry.js';
import { sampleLayout } from '../../../src/layouts/sample.js';
import { createRng } from '../../../src/layouts/random.js';
import { CAMERA_NAMES, type RgbImage } from '../../../src/policy/contract.js';
import { pixel } from './scenes.js';
import { partsBounds } from '../../../src/tasks/footprint.js';

const renderer = new ChromiumRenderer();
after(() => renderer.close());
// Set SIM_CAMERAS_PNG_DIR to keep the images for a look.
const pngDir = process.env.SIM_CAMERAS_PNG_DIR;

async function keep(name: string, img: RgbImage): Promise<void> {
  if (!pngDir) return;
  mkdirSync(pngDir, { recursive: true });
  await sharp(Buffer.from(img.data), { raw: { width: img.width, height: img.height, channels: 3 } })
    .png()
    .toFile(join(pngDir, `${name}.png`));
}

const TABLE_COLOUR = [214, 206, 190];
/** Chromaticity: colour with brightness divided out, so a lit or shaded face keeps its value. */
const chroma = (c: readonly number[]): number[] => {
  const sum = c[0] + c[1] + c[2] || 1;
  return [c[0] / sum, c[1] / sum, c[2] / sum];
};
const dist = (a: readonly number[], b: readonly number[]): number => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
/** The pixel's hue is nearer the catalogue colour's than the table's. */
const showsColour = (px: readonly number[], colour: readonly number[]): boolean =>
  dist(chroma(px), chroma(colour)) < dist(chroma(px), chroma(TABLE_COLOUR));
/** Things a 224-px overhead view can resolve and tell from the table: ≥ 3 cm across, a hue unlike the table's. */
const resolvable = (colour: readonly number[], minExtentM: number): boolean =>
  minExtentM >= 0.03 && dist(chroma(colour), chroma(TABLE_COLOUR)) >= 0.05;

test('every task draws from a sampled tier-3 layout, and cam_high shows objects and fixtures in their catalogue colours where the sim holds them', async () => {
  const cam = DEFAULT_CAMERA_CALIBRATION.cameras.cam_high;
  for (const task of allTasks()) {
    const layout = sampleLayout(task, 3, 0, createRng(7));
    const scene = await createScene({ rigModel: yamRigModel(), task, layout, calibration: DEFAULT_SIM_CALIBRATION });
    try {
      const snap = scene.snapshot();
      const images = await renderer.render(snap, CAMERA_NAMES);
      for (const name of CAMERA_NAMES) await keep(`${task.id}-${name}`, images[name]!);
      const high = images.cam_high!;
      let seen = 0;
      let checked = 0;
      const things = [
        ...snap.objects.map((o) => ({ o, kind: task.objectKinds.find((k) => k.id === o.kind)! })),
        ...snap.fixtures.map((o) => ({ o, kind: task.fixtureKinds.find((k) => k.id === o.kind)! })),
      ];
      for (const { o, kind } of things) {
        const b = partsBounds(kind.parts);
        if (!resolvable(kind.color, Math.min(b.max[0] - b.min[0], b.max[1] - b.min[1], b.max[2] - b.min[2]))) continue;
        const { u, v, depthM } = projectToPixel(cam.intrinsics, cam.pose, [
          o.pose.position[0],
          o.pose.position[1],
          o.pose.position[2] + 0.01,
        ]);
        if (depthM <= 0 || u < 2 || v < 2 || u > 221 || v > 221) continue;
        checked += 1;
        if (showsColour(pixel(high, u, v), kind.color)) seen += 1;
      }
      // An arm may hide one; most must show.
      assert.ok(checked >= 1, `${task.id}: something resolvable in view`);
      assert.ok(
        seen >= Math.ceil((checked * 2) / 3),
        `${task.id}: ${seen} of ${checked} objects and fixtures show their catalogue colour at their projected position`,
      );
    } finally {
      scene.free();
    }
  }
});
