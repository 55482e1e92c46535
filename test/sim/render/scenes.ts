/** Scenes for the sim camera tests: the real rig model, forward kinematics and catalogue. */
import type { Pose3 } from '../../../src/tasks/geometry.js';
import { BIN, BOTTLE } from '../../../src/tasks/catalogue.js';
import { objectPose3 } from '../../../src/tasks/footprint.js';
import { yamRigModel } from '../../../src/rig/yam.js';
import { composeFrames, frameToPose, newFrame, poseToFrame } from '../../../src/rig/kinematics.js';
import {
  rigSnapshotGrippers,
  rigSnapshotLinks,
  type SceneSnapshot,
  type SceneTask,
  type SnapshotBody,
} from '../../../src/sim/render/scene-snapshot.js';
import assert from 'node:assert/strict';
import type { CameraName, RgbImage } from '../../../src/policy/contract.js';
import { CAMERA_NAMES } from '../../../src/policy/contract.js';
import { ChromiumRenderer, type ChromiumRendererOptions } from '../../../src/sim/render/chromium-renderer.js';
import { DEFAULT_CAMERA_CALIBRATION, type CameraCalibration } from '../../../src/sim/render/camera-calibration.js';
import type { SceneLook } from '../../../src/sim/render/scene-look.js';
import { createScene } from '../../../src/sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../../../src/sim/calibration.js';
import { allTasks } from '../../../src/tasks/registry.js';
import { sampleLayout } from '../../../src/layouts/sample.js';
import { createRng } from '../../../src/layouts/random.js';

export const RIG = yamRigModel();
export const BOTTLES_TASK: SceneTask = { id: 'bottles-in-the-bin', objectKinds: [BOTTLE], fixtureKinds: [BIN] };

/** A reaching pose for both arms (policy order, mirrored j1), grippers half open. */
export function reachingState(j1 = 0.2, j2 = 1.2, j3 = 1.0): Float64Array {
  const arm = [j1, j2, j3, -0.6, 0, 0, 0.5];
  const q = new Float64Array(14);
  for (let i = 0; i < 7; i++) {
    q[i] = arm[i];
    q[7 + i] = i === 0 ? -arm[i] : arm[i];
  }
  return q;
}

export function bottleAt(id: string, x: number, y: number): SnapshotBody {
  return { id, kind: BOTTLE.id, pose: objectPose3(BOTTLE, 'upright', { x, y, yawRad: 0 }) };
}

export function scene(state: Float64Array, objects: SnapshotBody[], fixtures: SnapshotBody[] = []): SceneSnapshot {
  return {
    task: BOTTLES_TASK,
    links: rigSnapshotLinks(RIG, state),
    grippers: rigSnapshotGrippers(RIG, state),
    objects,
    fixtures,
  };
}

/** The pose `offset` expressed in the frame `parent` (both table-frame poses composed). */
export function compose(parent: Pose3, offset: Pose3): Pose3 {
  return frameToPose(composeFrames(poseToFrame(parent), poseToFrame(offset), newFrame()));
}

export function pixel(img: RgbImage, u: number, v: number): [number, number, number] {
  const x = Math.round(u);
  const y = Math.round(v);
  const i = (y * img.width + x) * 3;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

/** The catalogue's bottle blue under any light: blue clearly above red. */
export function looksBlue([r, g, b]: readonly number[]): boolean {
  return b > r + 60 && b > g;
}

export function differingPixels(a: RgbImage, b: RgbImage): number {
  let n = 0;
  for (let i = 0; i < a.data.length; i += 3) {
    if (a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2]) n += 1;
  }
  return n;
}

export type Images = Partial<Record<CameraName, RgbImage>>;

/** Draws the requests with one renderer made with `options`, then closes it (one browser up at a time). */
export interface DrawRequest {
  readonly snap: SceneSnapshot;
  readonly cams: readonly CameraName[];
  readonly look?: SceneLook;
}

export async function drawAll(options: ChromiumRendererOptions, requests: readonly DrawRequest[]): Promise<Images[]> {
  const r = new ChromiumRenderer(options);
  try {
    const out: Images[] = [];
    for (const q of requests) out.push(await r.render(q.snap, q.cams, q.look));
    return out;
  } finally {
    await r.close();
  }
}

/** Every request gave the same cameras with byte-identical images (`reference` names the other drawing). */
export function assertSameImages(now: Images[], before: Images[], what: string, reference: string): void {
  assert.equal(now.length, before.length);
  now.forEach((images, i) => {
    assert.deepEqual(
      Object.keys(images).sort(),
      Object.keys(before[i]).sort(),
      `${what} request ${i}: the same cameras`,
    );
    for (const name of Object.keys(before[i]) as CameraName[]) {
      const a = images[name]!;
      const b = before[i][name]!;
      assert.equal(a.width, b.width);
      assert.equal(a.height, b.height);
      assert.equal(
        differingPixels(a, b),
        0,
        `${what} request ${i} ${name}: ${differingPixels(a, b)} pixels differ from ${reference}`,
      );
      assert.ok(Buffer.from(a.data).equals(Buffer.from(b.data)), `${what} request ${i} ${name}: byte-identical`);
    }
  });
}

/**
 * Requests for comparing two ways of drawing: every task's sim scene, an arm moving (requests 3–5),
 * a single camera and a camera subset.
 */
export async function comparisonRequests(): Promise<DrawRequest[]> {
  const requests: DrawRequest[] = [];
  for (const task of allTasks()) {
    const s = await createScene({
      rigModel: RIG,
      task,
      layout: sampleLayout(task, 4, 0, createRng(11)),
      calibration: DEFAULT_SIM_CALIBRATION,
      startPosition: reachingState(),
    });
    try {
      requests.push({ snap: s.snapshot(), cams: CAMERA_NAMES });
    } finally {
      s.free();
    }
  }
  for (const j1 of [0, 0.3, 0.6])
    requests.push({
      snap: scene(reachingState(j1), [bottleAt('bottle-1', 0.05, 0.15), bottleAt('bottle-2', -0.1, -0.2)]),
      cams: CAMERA_NAMES,
    });
  requests.push({ snap: scene(reachingState(), [bottleAt('bottle-1', 0, 0)]), cams: ['cam_high'] });
  requests.push({
    snap: scene(reachingState(0.1), [bottleAt('bottle-1', 0, 0)]),
    cams: ['cam_right_wrist', 'cam_left_wrist'],
  });
  return requests;
}

/** The default cameras with cam_high at 320 × 240 and cam_left_wrist at 160 × 120: three sizes in one request. */
export const MIXED_SIZES_CALIBRATION: CameraCalibration = {
  name: 'mixed sizes',
  version: 1,
  cameras: {
    ...DEFAULT_CAMERA_CALIBRATION.cameras,
    cam_high: {
      ...DEFAULT_CAMERA_CALIBRATION.cameras.cam_high,
      intrinsics: { widthPx: 320, heightPx: 240, fxPx: 190, fyPx: 190, cxPx: 159.5, cyPx: 119.5 },
    },
    cam_left_wrist: {
      ...DEFAULT_CAMERA_CALIBRATION.cameras.cam_left_wrist,
      intrinsics: { widthPx: 160, heightPx: 120, fxPx: 82, fyPx: 82, cxPx: 79.5, cyPx: 59.5 },
    },
  },
};
