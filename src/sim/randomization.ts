/**
 * Domain randomization: a spec of seeded ranges for the sim's physics and placement, drawn once
 * per rollout into an ordinary sim calibration record, and for what its cameras see (camera pose,
 * light, colours), drawn into a look record the renderer applies. The draw depends only on the
 * spec, the layout index and the repeat, so a rerun of the same sweep draws the same worlds, and
 * each rollout stores the records it ran on (their hashes, and the records in the store) like
 * any other calibration — any result can be reproduced from the store alone.
 *
 * Layout density and posture are drawn through the layout sampler, not here: a spec's `layouts`
 * section (which tiers, how many crowded or lying objects a layout must have) is what
 * `tandem layouts sample --randomize SPEC` and `tandem sim generate --randomize SPEC` sample by; a
 * layout set, once pinned by its hash, is never changed. A spec may carry its `lineage` (the
 * diagnosis that proposed it and the rollouts behind it); it is part of the hash, never drawn.
 * Textures are not in this version: a spec that asks for them is refused with a sentence rather
 * than half-applied, and so is a spec that randomizes nothing.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { createRng } from '../layouts/random.js';
import { calibrationProblem, type JointCalibration, type SimCalibration } from './calibration.js';
import { CAMERA_NAMES, type CameraName } from '../policy/contract.js';
import type { CameraOffset, SceneLook, Vec3 } from './render/scene-look.js';

export const RANDOMIZATION_FORMAT = 'tandem.randomization/1';
/** The store's calibration kind for a randomization spec (linked to every rollout drawn from it). */
export const RANDOMIZATION_KIND = 'sim-randomization';
/** The store's calibration kind for one rollout's drawn look (camera poses, light, colours). */
export const SIM_LOOK_KIND = 'sim-look';

/** A closed range [lo, hi], drawn uniformly. */
export type Range = readonly [number, number];

/** Physics fields a spec may draw, each with the widest range that is still a physical table top. */
export const PHYSICS_BOUNDS = {
  /** Scales the catalogue's object masses: a bottle from a fifth to five times its weight. */
  objectMassScale: [0.2, 5],
  objectFrictionScale: [0, 3],
  tableFriction: [0, 2],
  fingerFriction: [0, 3],
  gripperMaxForceN: [1, 100],
  restitution: [0, 0.9],
  /** Multiply every joint's damping / Coulomb friction / armature. */
  jointDampingScale: [0, 10],
  jointFrictionScale: [0, 10],
  jointArmatureScale: [0, 10],
} as const satisfies Record<string, Range>;
export type PhysicsField = keyof typeof PHYSICS_BOUNDS;

/** Placement noise: each movable object and fixture shifted by N(0, σ) per axis and turned by N(0, σ_yaw). */
export const PLACEMENT_BOUNDS = { sigmaM: [0, 0.05], sigmaYawRad: [0, 0.5] } as const satisfies Record<string, Range>;

/**
 * What the cameras see, each a [lo, hi] range drawn uniformly — per camera and axis, per colour
 * channel — and bounded so the picture stays the same cell: cameras nudged, not moved elsewhere;
 * the light still over the table; colours still recognisably theirs.
 */
export const VISUAL_BOUNDS = {
  /** Each camera's offset along its own x, y, z (metres). */
  cameraPositionM: [-0.05, 0.05],
  /** Each camera's turn about its own x, y, z (radians, ±5.7°). */
  cameraAngleRad: [-0.1, 0.1],
  /** Scales every lamp. */
  lightIntensityScale: [0.3, 2],
  /** Turns the sun about the vertical (radians). */
  lightAzimuthRad: [-1, 1],
  /** Tilts the sun up or down (radians; it stays above the table). */
  lightElevationRad: [-0.5, 0.4],
  /** Multiplies each colour channel of every object and fixture. */
  objectColorScale: [0.5, 1.5],
  /** Multiplies each colour channel of the table top. */
  tableColorScale: [0.5, 1.5],
} as const satisfies Record<string, Range>;
export type VisualField = keyof typeof VISUAL_BOUNDS;

/**
 * Which layouts to sample: tiers, and at least how many objects of each layout must start crowded
 * (another object's centre within `crowdedRadiusM`) or lying. Drawn by the seeded layout sampler
 * with rejection, so the layouts stay ones the task's tier rules allow.
 */
export interface LayoutFocus {
  readonly tiers: readonly number[];
  readonly minCrowdedObjects?: number;
  readonly crowdedRadiusM?: number;
  readonly minLyingObjects?: number;
}

/** Where a proposed spec came from: the diagnosis and the rollouts behind it. */
export interface RandomizationLineage {
  readonly policy: string;
  readonly layoutSet: string;
  readonly pattern: string;
  readonly tiers: readonly number[];
  readonly condition: string | null;
  readonly sentence: string;
  readonly rolloutIds: readonly number[];
}

export interface RandomizationSpec {
  readonly format: typeof RANDOMIZATION_FORMAT;
  /** Seeds every draw (with the layout index and the repeat). */
  readonly seed: number;
  readonly physics?: Partial<Record<PhysicsField, Range>>;
  readonly placement?: { readonly sigmaM: number; readonly sigmaYawRad: number };
  readonly visual?: Partial<Record<VisualField, Range>>;
  readonly layouts?: LayoutFocus;
  readonly lineage?: RandomizationLineage;
}

/** The widest crowding radius a layout focus may ask for (a tier-5 table is about 60 × 80 cm). */
export const MAX_CROWDED_RADIUS_M = 0.3;

export interface HashedRandomizationSpec {
  readonly spec: RandomizationSpec;
  readonly canonicalJson: string;
  readonly sha256: string;
}

export class RandomizationSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RandomizationSpecError';
  }
}

const NOT_YET: Record<string, string> = {
  textures: 'texture randomization (colours are randomized under "visual")',
  density: 'layout density at the top (it goes under "layouts": {"tiers": [4, 5], "minCrowdedObjects": 2})',
};

/** A value as a sentence quotes it: its JSON cut to 60 characters; one too deeply nested to print is named, not printed. */
function quoted(v: unknown): string {
  let s: string | undefined;
  try {
    s = JSON.stringify(v);
  } catch {
    return Array.isArray(v) ? 'a list nested too deeply to show' : 'an object nested too deeply to show';
  }
  if (s === undefined) return String(v);
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

/** A field name as a sentence quotes it: cut to 40 characters. */
function named(k: string): string {
  return k.length > 40 ? `${k.slice(0, 37)}…` : k;
}

const isRange = (v: unknown): v is Range =>
  Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number' && Number.isFinite(x));

/** Parses and checks a spec; every refusal is one sentence naming the field and its physical range. */
export function parseRandomizationSpec(text: string, source: string): HashedRandomizationSpec {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new RandomizationSpecError(
      `${source} is not JSON (${(e as Error).message}); a randomization spec looks like {"format": "${RANDOMIZATION_FORMAT}", "seed": 1, "physics": {"objectMassScale": [0.8, 1.2]}}.`,
    );
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new RandomizationSpecError(`${source} must be a JSON object with "format": "${RANDOMIZATION_FORMAT}".`);
  const d = doc as Record<string, unknown>;
  if (d.format !== RANDOMIZATION_FORMAT)
    throw new RandomizationSpecError(
      `${source} has format ${quoted(d.format)}; this tandem reads "${RANDOMIZATION_FORMAT}".`,
    );
  if (!Number.isSafeInteger(d.seed))
    throw new RandomizationSpecError(
      `${source} needs a whole-number "seed" (every draw is seeded by it, the layout and the repeat).`,
    );
  for (const k of Object.keys(d)) {
    if (Object.hasOwn(NOT_YET, k))
      throw new RandomizationSpecError(
        `${source} asks for ${NOT_YET[k]}, which this version of the sim does not do; remove "${named(k)}" (physics and placement are randomized).`,
      );
    if (['camera', 'cameras', 'light', 'lights', 'colours', 'colors'].includes(k))
      throw new RandomizationSpecError(
        `${source} has "${named(k)}" at the top; camera, light and colour ranges go under "visual" (${Object.keys(VISUAL_BOUNDS).join(', ')}).`,
      );
    if (!['format', 'seed', 'physics', 'placement', 'visual', 'layouts', 'lineage'].includes(k))
      throw new RandomizationSpecError(
        `${source} has an unknown field "${named(k)}"; a spec has format, seed, physics, placement, visual, layouts and lineage.`,
      );
  }
  const physics: Partial<Record<PhysicsField, Range>> = {};
  if (d.physics !== undefined) {
    if (d.physics === null || typeof d.physics !== 'object' || Array.isArray(d.physics))
      throw new RandomizationSpecError(`${source}: "physics" must be an object of [lo, hi] ranges.`);
    for (const [k, v] of Object.entries(d.physics)) {
      if (!Object.hasOwn(PHYSICS_BOUNDS, k))
        throw new RandomizationSpecError(
          `${source}: physics "${named(k)}" is not a field the sim can randomize (it can: ${Object.keys(PHYSICS_BOUNDS).join(', ')}).`,
        );
      const [min, max] = PHYSICS_BOUNDS[k as PhysicsField];
      if (!isRange(v))
        throw new RandomizationSpecError(
          `${source}: physics "${named(k)}" must be a range [lo, hi] of two numbers, not ${quoted(v)}.`,
        );
      if (v[0] > v[1])
        throw new RandomizationSpecError(
          `${source}: physics "${named(k)}" is [${v[0]}, ${v[1]}]; the low end must come first.`,
        );
      if (v[0] < min || v[1] > max)
        throw new RandomizationSpecError(
          `${source}: physics "${named(k)}" [${v[0]}, ${v[1]}] is outside the physical range [${min}, ${max}].`,
        );
      if (k === 'objectMassScale' && v[0] <= 0)
        throw new RandomizationSpecError(`${source}: physics "objectMassScale" must stay above 0.`);
      physics[k as PhysicsField] = [v[0], v[1]];
    }
  }
  let placement: RandomizationSpec['placement'];
  if (d.placement !== undefined) {
    const p = d.placement as Record<string, unknown> | null;
    if (p === null || typeof p !== 'object' || Array.isArray(p))
      throw new RandomizationSpecError(`${source}: "placement" must be {"sigmaM": …, "sigmaYawRad": …}.`);
    for (const k of Object.keys(p))
      if (!Object.hasOwn(PLACEMENT_BOUNDS, k))
        throw new RandomizationSpecError(
          `${source}: placement "${named(k)}" is unknown; placement has sigmaM and sigmaYawRad.`,
        );
    const out: Record<string, number> = {};
    for (const [k, [min, max]] of Object.entries(PLACEMENT_BOUNDS)) {
      const v = p[k];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
        throw new RandomizationSpecError(
          `${source}: placement "${named(k)}" must be a number from ${min} to ${max}, not ${quoted(v)}.`,
        );
      out[k] = v;
    }
    placement = { sigmaM: out.sigmaM, sigmaYawRad: out.sigmaYawRad };
  }
  const visual: Partial<Record<VisualField, Range>> = {};
  if (d.visual !== undefined) {
    if (d.visual === null || typeof d.visual !== 'object' || Array.isArray(d.visual))
      throw new RandomizationSpecError(`${source}: "visual" must be an object of [lo, hi] ranges.`);
    for (const [k, v] of Object.entries(d.visual)) {
      if (!Object.hasOwn(VISUAL_BOUNDS, k))
        throw new RandomizationSpecError(
          `${source}: visual "${named(k)}" is not a field the sim cameras can randomize (they can: ${Object.keys(VISUAL_BOUNDS).join(', ')}).`,
        );
      const [min, max] = VISUAL_BOUNDS[k as VisualField];
      if (!isRange(v))
        throw new RandomizationSpecError(
          `${source}: visual "${named(k)}" must be a range [lo, hi] of two numbers, not ${quoted(v)}.`,
        );
      if (v[0] > v[1])
        throw new RandomizationSpecError(
          `${source}: visual "${named(k)}" is [${v[0]}, ${v[1]}]; the low end must come first.`,
        );
      if (v[0] < min || v[1] > max)
        throw new RandomizationSpecError(
          `${source}: visual "${named(k)}" [${v[0]}, ${v[1]}] is outside the range that keeps the picture the same cell [${min}, ${max}].`,
        );
      visual[k as VisualField] = [v[0], v[1]];
    }
  }
  const layouts = d.layouts === undefined ? undefined : parseLayoutFocus(d.layouts, source);
  const lineage = d.lineage === undefined ? undefined : parseLineage(d.lineage, source);
  const spec: RandomizationSpec = {
    format: RANDOMIZATION_FORMAT,
    seed: d.seed as number,
    ...(Object.keys(physics).length > 0 ? { physics } : {}),
    ...(placement ? { placement } : {}),
    ...(Object.keys(visual).length > 0 ? { visual } : {}),
    ...(layouts ? { layouts } : {}),
    ...(lineage ? { lineage } : {}),
  };
  const nothing = randomizesNothing(spec);
  if (nothing)
    throw new RandomizationSpecError(
      `${source} randomizes nothing (${nothing}); give at least one range under physics or visual, a placement sigma above 0, or a layouts section that asks for crowded or lying objects.`,
    );
  return hashRandomizationSpec(spec);
}

/** Why a spec draws every world the same as without it, or undefined when something varies. */
export function randomizesNothing(spec: RandomizationSpec): string | undefined {
  const varies = (r: Range): boolean => r[1] > r[0];
  const physics = Object.values(spec.physics ?? {}).some(varies);
  const visual = Object.values(spec.visual ?? {}).some(varies);
  const placement = spec.placement !== undefined && (spec.placement.sigmaM > 0 || spec.placement.sigmaYawRad > 0);
  const l = spec.layouts;
  const layouts = l !== undefined && ((l.minCrowdedObjects ?? 0) > 0 || (l.minLyingObjects ?? 0) > 0);
  if (physics || visual || placement || layouts) return undefined;
  const fixed = [...Object.entries(spec.physics ?? {}), ...Object.entries(spec.visual ?? {})]
    .filter(([, r]) => !varies(r))
    .map(([k]) => k);
  return fixed.length > 0
    ? `every range is a single value: ${fixed.join(', ')}`
    : 'no range, no placement noise and no layout focus';
}

function parseLayoutFocus(v: unknown, source: string): LayoutFocus {
  const example = '{"tiers": [4, 5], "minCrowdedObjects": 2, "crowdedRadiusM": 0.15, "minLyingObjects": 1}';
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new RandomizationSpecError(`${source}: "layouts" must be an object like ${example}.`);
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!['tiers', 'minCrowdedObjects', 'crowdedRadiusM', 'minLyingObjects'].includes(k))
      throw new RandomizationSpecError(
        `${source}: layouts "${named(k)}" is unknown; layouts has tiers, minCrowdedObjects, crowdedRadiusM and minLyingObjects.`,
      );
  const tiers = o.tiers;
  if (!Array.isArray(tiers) || tiers.length === 0 || !tiers.every((t) => Number.isSafeInteger(t) && t >= 1 && t <= 5))
    throw new RandomizationSpecError(
      `${source}: layouts "tiers" must be a list of tiers from 1 to 5 like [4, 5], not ${quoted(tiers)}.`,
    );
  const count = (k: string): number | undefined => {
    const x = o[k];
    if (x === undefined) return undefined;
    if (!Number.isSafeInteger(x) || (x as number) < 0 || (x as number) > 20)
      throw new RandomizationSpecError(
        `${source}: layouts "${named(k)}" must be a whole number of objects from 0 to 20, not ${quoted(x)}.`,
      );
    return x as number;
  };
  const minCrowdedObjects = count('minCrowdedObjects');
  const minLyingObjects = count('minLyingObjects');
  const r = o.crowdedRadiusM;
  if (r !== undefined && !(typeof r === 'number' && r > 0 && r <= MAX_CROWDED_RADIUS_M))
    throw new RandomizationSpecError(
      `${source}: layouts "crowdedRadiusM" must be a distance above 0 and at most ${MAX_CROWDED_RADIUS_M} m, not ${quoted(r)}.`,
    );
  return {
    tiers: [...new Set(tiers as number[])].sort((a, b) => a - b),
    ...(minCrowdedObjects !== undefined ? { minCrowdedObjects } : {}),
    ...(r !== undefined ? { crowdedRadiusM: r as number } : {}),
    ...(minLyingObjects !== undefined ? { minLyingObjects } : {}),
  };
}

function parseLineage(v: unknown, source: string): RandomizationLineage {
  const o = v as Record<string, unknown> | null;
  const ok =
    o !== null &&
    typeof o === 'object' &&
    !Array.isArray(o) &&
    typeof o.policy === 'string' &&
    typeof o.layoutSet === 'string' &&
    typeof o.pattern === 'string' &&
    typeof o.sentence === 'string' &&
    (o.condition === null || typeof o.condition === 'string') &&
    Array.isArray(o.tiers) &&
    o.tiers.every((t) => Number.isSafeInteger(t)) &&
    Array.isArray(o.rolloutIds) &&
    o.rolloutIds.every((t) => Number.isSafeInteger(t));
  if (!ok)
    throw new RandomizationSpecError(
      `${source}: "lineage" must say which diagnosis proposed it: policy, layoutSet, pattern, tiers, condition, sentence and rolloutIds (as tandem diagnose --propose-randomization writes it).`,
    );
  const l = o as unknown as RandomizationLineage;
  return {
    policy: l.policy,
    layoutSet: l.layoutSet,
    pattern: l.pattern,
    tiers: [...l.tiers],
    condition: l.condition,
    sentence: l.sentence,
    rolloutIds: [...l.rolloutIds],
  };
}

export function hashRandomizationSpec(spec: RandomizationSpec): HashedRandomizationSpec {
  const canonicalJson = canonicalize(spec)!;
  return { spec, canonicalJson, sha256: createHash('sha256').update(canonicalJson).digest('hex') };
}

/** One rollout's world: the calibration it runs on, its placement noise, and how its cameras see it. */
export interface RandomizedWorld {
  readonly calibration: SimCalibration;
  readonly placement?: { readonly sigmaM: number; readonly sigmaYawRad: number };
  readonly look?: SceneLook;
}

/**
 * The draw for (layout index, repeat): the base calibration with each listed field drawn
 * uniformly from its range, named after the spec and the draw so its hash is its own. The same
 * arguments always give the same record.
 */
export function drawWorld(
  base: SimCalibration,
  r: HashedRandomizationSpec,
  layoutIndex: number,
  repeat: number,
): RandomizedWorld {
  // One stream per (spec seed, layout, repeat), fields drawn in the fixed order of PHYSICS_BOUNDS,
  // so adding a field to a spec never changes another field's draw order silently: every field
  // is drawn (and discarded when not listed).
  const rng = createRng(mixSeed(r.spec.seed, layoutIndex, repeat));
  const drawn: Partial<Record<PhysicsField, number>> = {};
  for (const k of Object.keys(PHYSICS_BOUNDS) as PhysicsField[]) {
    const u = rng.next();
    const range = r.spec.physics?.[k];
    if (range) drawn[k] = range[0] + (range[1] - range[0]) * u;
  }
  const scaleJoints = (j: JointCalibration): JointCalibration => ({
    dampingNms: j.dampingNms * (drawn.jointDampingScale ?? 1),
    frictionNm: j.frictionNm * (drawn.jointFrictionScale ?? 1),
    armatureKgM2: j.armatureKgM2 * (drawn.jointArmatureScale ?? 1),
  });
  const calibration: SimCalibration = {
    ...base,
    name: `${base.name}~dr:${r.sha256.slice(0, 12)}:L${layoutIndex}R${repeat}`,
    joints: base.joints.map(scaleJoints),
    ...(drawn.objectMassScale !== undefined ? { objectMassScale: base.objectMassScale * drawn.objectMassScale } : {}),
    ...(drawn.objectFrictionScale !== undefined
      ? { objectFrictionScale: base.objectFrictionScale * drawn.objectFrictionScale }
      : {}),
    ...(drawn.tableFriction !== undefined ? { tableFriction: drawn.tableFriction } : {}),
    ...(drawn.fingerFriction !== undefined ? { fingerFriction: drawn.fingerFriction } : {}),
    ...(drawn.gripperMaxForceN !== undefined ? { gripperMaxForceN: drawn.gripperMaxForceN } : {}),
    ...(drawn.restitution !== undefined ? { restitution: drawn.restitution } : {}),
  };
  const problem = calibrationProblem(calibration);
  if (problem)
    throw new RandomizationSpecError(
      `The randomization drew a world the sim cannot run (${problem}); narrow the spec's ranges.`,
    );
  const look = drawLook(r, layoutIndex, repeat);
  return { calibration, ...(r.spec.placement ? { placement: r.spec.placement } : {}), ...(look ? { look } : {}) };
}

/**
 * The look for (layout index, repeat): its own random stream (so visual fields never shift a
 * physics draw, and physics fields never shift a visual one), every value drawn in a fixed order
 * — per camera position and angle, then light, then colours — and kept only where the spec lists
 * it. Undefined when the spec has no visual ranges: the default picture.
 */
export function drawLook(r: HashedRandomizationSpec, layoutIndex: number, repeat: number): SceneLook | undefined {
  const v = r.spec.visual;
  if (!v) return undefined;
  const rng = createRng(mixSeed(r.spec.seed ^ 0x1f0c4a5d, layoutIndex, repeat));
  const draw = (range: Range | undefined): number | undefined => {
    const u = rng.next();
    return range ? range[0] + (range[1] - range[0]) * u : undefined;
  };
  const triple = (range: Range | undefined): Vec3 | undefined => {
    const t = [draw(range), draw(range), draw(range)];
    return range ? (t as unknown as Vec3) : undefined;
  };
  const cameras: Partial<Record<CameraName, CameraOffset>> = {};
  for (const name of CAMERA_NAMES) {
    const positionM = triple(v.cameraPositionM) ?? [0, 0, 0];
    const rotationRad = triple(v.cameraAngleRad) ?? [0, 0, 0];
    if (v.cameraPositionM || v.cameraAngleRad) cameras[name] = { positionM, rotationRad };
  }
  const intensityScale = draw(v.lightIntensityScale);
  const sunAzimuthRad = draw(v.lightAzimuthRad);
  const sunElevationRad = draw(v.lightElevationRad);
  const objectColorScale = triple(v.objectColorScale);
  const tableColorScale = triple(v.tableColorScale);
  const lit = intensityScale !== undefined || sunAzimuthRad !== undefined || sunElevationRad !== undefined;
  return {
    ...(Object.keys(cameras).length > 0 ? { cameras } : {}),
    ...(lit
      ? {
          light: {
            intensityScale: intensityScale ?? 1,
            sunAzimuthRad: sunAzimuthRad ?? 0,
            sunElevationRad: sunElevationRad ?? 0,
          },
        }
      : {}),
    ...(objectColorScale ? { objectColorScale } : {}),
    ...(tableColorScale ? { tableColorScale } : {}),
  };
}

/** A drawn look as a store record: canonical JSON and its SHA-256, linked to the rollout that used it. */
export function lookRecord(look: SceneLook): {
  readonly sha256: string;
  readonly kind: typeof SIM_LOOK_KIND;
  readonly version: 1;
  readonly canonicalJson: string;
} {
  const canonicalJson = canonicalize(look)!;
  return {
    sha256: createHash('sha256').update(canonicalJson).digest('hex'),
    kind: SIM_LOOK_KIND,
    version: 1,
    canonicalJson,
  };
}

/** A 32-bit seed from three integers (splitmix-style finalizer), so neighbouring draws are unrelated. */
function mixSeed(seed: number, layoutIndex: number, repeat: number): number {
  let h = (seed ^ Math.imul(layoutIndex + 1, 0x9e3779b1) ^ Math.imul(repeat + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
