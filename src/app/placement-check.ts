/**
 * The placement check's parts for a station: the sim twin draws the layout (and the empty table)
 * from the calibrated overhead camera, `cam_high`, and each object's placement error is measured in
 * the overhead camera's frame against that picture (calibration/camera-table/placement-measure.ts).
 *
 * Where the frame comes from: on the emulated cell, the cell's own table as the operator left it,
 * drawn from where its overhead camera really hangs (the truth's mounting, hidden from the gate);
 * a station whose cam_high is a hardware camera has no camera↔table calibration to measure with
 * yet, and one without a cam_high has nothing to look with: both answer "unchecked" with the
 * reason, and the session runs the rollout unchecked.
 */
import type { RgbImage } from '../policy/contract.js';
import type { RigModel } from '../rig/contract.js';
import { yamRigModel } from '../rig/yam.js';
import { quaternionToRotation, rotationToRpy, invertFrame, composeFrames, poseToFrame } from '../rig/kinematics.js';
import type { Layout } from '../tasks/types.js';
import { objectKindOf } from '../tasks/registry.js';
import { createScene, boundsCentre, HOME_START_POSITION } from '../sim/scene.js';
import { DEFAULT_SIM_CALIBRATION } from '../sim/calibration.js';
import { ChromiumRenderer } from '../sim/render/chromium-renderer.js';
import type { Renderer } from '../sim/render/renderer.js';
import type { SceneLook } from '../sim/render/scene-look.js';
import type { SceneSnapshot } from '../sim/render/scene-snapshot.js';
import { cameraPoseInTable } from '../sim/render/camera-projection.js';
import { DEFAULT_CAMERA_CALIBRATION, type CameraModel } from '../sim/render/camera-calibration.js';
import { measurePlacement, type ExpectedObject } from '../../calibration/camera-table/placement-measure.js';
import {
  DEFAULT_PLACEMENT_THRESHOLDS,
  type PlacementCheck,
  type PlacementThresholds,
} from '../session/placement-gate.js';
import type { OperatorStep, PlacementGate } from '../session/ports.js';
import { cellTableSnapshot } from '../emulated-cell/cell-world.js';
import { cellCameraMounting } from '../emulated-cell/cell-cameras.js';
import { cellTruth, DEFAULT_CELL_GAP, parseCellGap } from '../emulated-cell/cell-truth.js';
import type { StationConfig } from './station-config.js';
import { rigKindOf } from './station-rig.js';

/** The camera the check looks with. */
export const OVERHEAD_CAMERA = 'cam_high';

/**
 * The emulated cell's scripted operator's hands: `--placement-error-mm N` puts the layout's first
 * object N mm off its outline (along the table's +x) the first time each rollout is placed; placed
 * again after the gate refused it, it goes on its outline, as a person would move it.
 */
export class ScriptedHands {
  private readonly placements = new Map<string, number>();
  constructor(readonly errorMm: number) {}
  placed(step: Pick<OperatorStep, 'slot' | 'attempt'>): void {
    const k = `${step.slot}.${step.attempt}`;
    this.placements.set(k, (this.placements.get(k) ?? 0) + 1);
  }
  /** The layout as it stands on the table after this rollout's latest placement. */
  onTable(step: Pick<OperatorStep, 'slot' | 'attempt'>, layout: Layout): Layout {
    const n = this.placements.get(`${step.slot}.${step.attempt}`) ?? 1;
    if (n > 1 || this.errorMm === 0 || layout.objects.length === 0) return layout;
    const [first, ...rest] = layout.objects;
    return {
      ...layout,
      objects: [{ ...first, pose: { ...first.pose, x: first.pose.x + this.errorMm / 1000 } }, ...rest],
    };
  }
}

/** Where each object's visual centre should be (table frame) and the colour the twin draws it in. */
function expectedObjects(snapshot: SceneSnapshot, layout: Layout, task: OperatorStep['task']): ExpectedObject[] {
  return layout.objects.map((o) => {
    const kind = objectKindOf(task, o.kind)!;
    const body = snapshot.objects.find((b) => b.id === o.id)!;
    const R = quaternionToRotation(body.pose.quaternion);
    const c = boundsCentre(kind.parts);
    const p = body.pose.position;
    return {
      id: o.id,
      color: kind.color,
      centreM: [0, 1, 2].map((r) => p[r] + R[3 * r] * c[0] + R[3 * r + 1] * c[1] + R[3 * r + 2] * c[2]) as [
        number,
        number,
        number,
      ],
    };
  });
}

export interface TwinGateOptions {
  /** Draws with the station's camera calibration (its hash is the measurement's). */
  readonly renderer: Renderer;
  readonly rigModel?: RigModel;
  readonly thresholds?: PlacementThresholds;
  /** The overhead camera's frame of the table as placed, and where the arms stand in it (14, policy order). */
  frame(step: OperatorStep): Promise<{ readonly image: RgbImage; readonly armPosition: ArrayLike<number> }>;
}

/** The gate: the twin's picture of the layout from the calibrated camera against the camera's frame. */
export function twinPlacementGate(o: TwinGateOptions): PlacementGate {
  const rigModel = o.rigModel ?? yamRigModel();
  return {
    thresholds: o.thresholds ?? DEFAULT_PLACEMENT_THRESHOLDS,
    async check(step): Promise<PlacementCheck> {
      const seen = await o.frame(step);
      // The layout exactly as planned, nothing jittered, the arms where the camera sees them.
      const scene = await createScene({
        rigModel,
        task: step.task,
        layout: step.layout,
        calibration: DEFAULT_SIM_CALIBRATION,
        startPosition: seen.armPosition,
      });
      let expected: SceneSnapshot;
      try {
        expected = scene.snapshot();
      } finally {
        scene.free();
      }
      const background: SceneSnapshot = { ...expected, objects: [] };
      const exp = (await o.renderer.render(expected, [OVERHEAD_CAMERA]))[OVERHEAD_CAMERA]!;
      const bg = (await o.renderer.render(background, [OVERHEAD_CAMERA]))[OVERHEAD_CAMERA]!;
      const model = o.renderer.calibration.calibration.cameras[OVERHEAD_CAMERA];
      const objects = measurePlacement(
        { observed: seen.image, expected: exp, background: bg },
        { intrinsics: model.intrinsics, poseInTable: cameraPoseInTable(OVERHEAD_CAMERA, model, expected.links) },
        expectedObjects(expected, step.layout, step.task),
      );
      return {
        checked: true,
        camera: OVERHEAD_CAMERA,
        calibrationSha256: o.renderer.calibration.sha256,
        objects: objects.map(({ pixels: _p, ...m }) => m),
      };
    },
  };
}

/** A gate that cannot look: every check answers unchecked with the reason. */
export function uncheckedPlacementGate(
  reason: string,
  thresholds: PlacementThresholds = DEFAULT_PLACEMENT_THRESHOLDS,
): PlacementGate {
  return { thresholds, check: () => Promise.resolve({ checked: false, reason }) };
}

/**
 * The look that moves the calibrated camera to where `real` hangs (both table-mounted): the offset
 * in the calibrated camera's optical frame, so one renderer draws the cell's true view too.
 */
function lookTowards(calibrated: CameraModel, real: CameraModel): SceneLook {
  const off = composeFrames(invertFrame(poseToFrame(calibrated.pose)), poseToFrame(real.pose));
  const p = off.position;
  return {
    cameras: { [OVERHEAD_CAMERA]: { positionM: [p[0], p[1], p[2]], rotationRad: rotationToRpy(off.rotation) } },
  };
}

export interface StationGateOptions {
  readonly thresholds?: PlacementThresholds;
  readonly rigModel?: RigModel;
  /** The scripted operator's hands on the emulated cell (what is really on its table); default: the layout as planned. */
  readonly hands?: ScriptedHands;
  /** The renderer to draw with (tests share one); default a Chromium with the station's camera calibration. */
  readonly renderer?: Renderer;
}

/** The gate a station gets from its config, and what to close after the session. */
export function stationPlacementGate(
  station: StationConfig,
  o: StationGateOptions = {},
): { readonly gate: PlacementGate; close(): Promise<void> } {
  const thresholds = o.thresholds ?? DEFAULT_PLACEMENT_THRESHOLDS;
  const cam = station.cameras.find((c) => c.name === OVERHEAD_CAMERA);
  if (!cam)
    return {
      gate: uncheckedPlacementGate(`the station has no overhead camera (${OVERHEAD_CAMERA}) in its config`, thresholds),
      close: () => Promise.resolve(),
    };
  if (cam.kind !== 'cell' || !rigKindOf(station.rig).ownWorld) {
    return {
      gate: uncheckedPlacementGate(
        `the overhead camera ${OVERHEAD_CAMERA} has no camera↔table calibration to measure placement with (the projector-pattern calibration is not built yet)`,
        thresholds,
      ),
      close: () => Promise.resolve(),
    };
  }
  const rigModel = o.rigModel ?? yamRigModel();
  const renderer = o.renderer ?? new ChromiumRenderer({ calibration: DEFAULT_CAMERA_CALIBRATION });
  const gap = typeof station.rig.gap === 'string' ? parseCellGap(station.rig.gap) : DEFAULT_CELL_GAP;
  const truth = cellTruth(gap);
  const look = lookTowards(
    renderer.calibration.calibration.cameras[OVERHEAD_CAMERA],
    cellCameraMounting(truth, renderer.calibration.calibration).cameras[OVERHEAD_CAMERA],
  );
  const gate = twinPlacementGate({
    renderer,
    rigModel,
    thresholds,
    async frame(step) {
      const layout = o.hands ? o.hands.onTable(step, step.layout) : step.layout;
      const snap = await cellTableSnapshot({ rigModel, task: step.task, layout, truth, placementSeed: step.seed });
      const image = (await renderer.render(snap, [OVERHEAD_CAMERA], look))[OVERHEAD_CAMERA]!;
      return { image, armPosition: HOME_START_POSITION };
    },
  });
  return { gate, close: () => (o.renderer ? Promise.resolve() : renderer.close()) };
}
