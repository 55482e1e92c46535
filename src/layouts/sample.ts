/**
 * The seeded tier sampler: draws layouts whose objects lie inside the task workspace (or inside
 * their fixture), keep a clearance between footprints, stay off the fixtures and are within reach
 * of at least one arm and clear of where the arms are at home. Rejection sampling with bounded attempts, so an impossible tier fails with
 * a sentence instead of looping. Poses are rounded before they are checked, so what the file
 * holds is exactly what passed the checks, and the JSON is stable.
 */
import {
  ARM_BASE_HALF_M,
  ARM_BASE_XY_M,
  ARM_HOME_CLEAR_HEIGHT_M,
  ARM_HOME_KEEP_OUT,
  ARM_HOME_KEEP_OUT_LOW,
  armsReaching,
  STATION_ARMS,
  TABLE_RECT,
} from '../tasks/station.js';
import {
  fixtureFootprint,
  objectFootprint,
  partsBounds,
  rectCorners,
  rectInside,
  rectsOverlap,
  toFixtureFrame,
  type OrientedRect,
} from '../tasks/footprint.js';
import { categoryOf } from '../tasks/catalogue.js';
import { fixtureKindOf, objectKindOf } from '../tasks/registry.js';
import type {
  FixtureKind,
  Layout,
  LayoutFixture,
  TableRect,
  LayoutObject,
  ObjectKind,
  Posture,
  TablePose,
  TaskDefinition,
  TierSpec,
} from '../tasks/types.js';
import { LayoutSetError } from './errors.js';
import { FOCUS_DRAWS, focusAccepts, focusWords, type LayoutFocusRule } from './focus.js';
import type { Rng } from './random.js';

export const TIER_MIN = 1;
export const TIER_MAX = 5;
/** Whole-layout attempts before a tier is declared unsatisfiable. */
export const LAYOUT_ATTEMPTS = 60;
/** Position draws per object within one layout attempt. */
export const PLACEMENT_ATTEMPTS = 300;

/** 0.1 mm and 0.0001 rad: far below placement accuracy (≈2 mm), and short, stable JSON. */
export function roundM(v: number): number {
  const r = Math.round(v * 1e4) / 1e4;
  return r === 0 ? 0 : r;
}
export const roundRad = roundM;

function roundPose(x: number, y: number, yawRad: number): TablePose {
  return { x: roundM(x), y: roundM(y), yawRad: roundRad(yawRad) };
}

export function tierSpec(task: TaskDefinition, tier: number): TierSpec {
  const spec = task.tiers.find((t) => t.tier === tier);
  if (!spec)
    throw new LayoutSetError(`Tier ${tier} is out of range for ${task.id}: tiers run from ${TIER_MIN} to ${TIER_MAX}.`);
  return spec;
}

function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

const reachable = (x: number, y: number): boolean => armsReaching(x, y).length > 0;

/** The squares the arm bases stand on. */
export const ARM_BASE_RECTS: readonly OrientedRect[] = STATION_ARMS.map((arm) => ({
  cx: ARM_BASE_XY_M[arm][0],
  cy: ARM_BASE_XY_M[arm][1],
  halfX: ARM_BASE_HALF_M,
  halfY: ARM_BASE_HALF_M,
  yawRad: 0,
}));

const asRect = (r: TableRect): OrientedRect => ({
  cx: (r.xMin + r.xMax) / 2,
  cy: (r.yMin + r.yMax) / 2,
  halfX: (r.xMax - r.xMin) / 2,
  halfY: (r.yMax - r.yMin) / 2,
  yawRad: 0,
});
/** The space each arm occupies at its home pose (station.ts): kept clear of objects and tall fixtures. */
export const ARM_KEEP_OUT_RECTS: readonly OrientedRect[] = STATION_ARMS.map((arm) => asRect(ARM_HOME_KEEP_OUT[arm]));
/** Its full-height part, near the base: kept clear of every fixture. */
export const ARM_KEEP_OUT_LOW_RECTS: readonly OrientedRect[] = STATION_ARMS.map((arm) =>
  asRect(ARM_HOME_KEEP_OUT_LOW[arm]),
);

/** The keep-out rectangles a fixture must stay out of: all of them, or only the full-height parts for one low enough to fit under the raised arm. */
export function armKeepOutsFor(kind: FixtureKind): readonly OrientedRect[] {
  return partsBounds(kind.parts).max[2] > ARM_HOME_CLEAR_HEIGHT_M ? ARM_KEEP_OUT_RECTS : ARM_KEEP_OUT_LOW_RECTS;
}

function placeFixtures(task: TaskDefinition, spec: TierSpec, rng: Rng): LayoutFixture[] | undefined {
  const placed: { fixture: LayoutFixture; rect: OrientedRect }[] = [];
  for (const p of task.fixtures) {
    const kind = fixtureKindOf(task, p.kind);
    if (!kind) throw new Error(`${task.id} places fixture kind '${p.kind}', which it does not list`);
    const vary = spec.draw.fixturesVary;
    const pose = roundPose(
      vary ? rng.uniform(p.region.xMin, p.region.xMax) : (p.region.xMin + p.region.xMax) / 2,
      vary ? rng.uniform(p.region.yMin, p.region.yMax) : (p.region.yMin + p.region.yMax) / 2,
      vary ? rng.uniform(p.yawRangeRad[0], p.yawRangeRad[1]) : (p.yawRangeRad[0] + p.yawRangeRad[1]) / 2,
    );
    const rect = fixtureFootprint(kind, pose);
    if (!rectInside(rect, TABLE_RECT) || !reachable(pose.x, pose.y)) return undefined;
    if (ARM_BASE_RECTS.some((b) => rectsOverlap(b, rect, task.clearances.fixtureM))) return undefined;
    if (armKeepOutsFor(kind).some((k) => rectsOverlap(k, rect, task.clearances.fixtureM))) return undefined;
    if (placed.some((q) => rectsOverlap(q.rect, rect, task.clearances.fixtureM))) return undefined;
    placed.push({ fixture: { id: p.id, kind: p.kind, pose }, rect });
  }
  return placed.map((q) => q.fixture);
}

/** Postures for the drawn kinds, honouring the tier's upside-down range and minimum not upright. */
function drawPostures(kinds: readonly ObjectKind[], spec: TierSpec, rng: Rng): Posture[] | undefined {
  const can = (k: ObjectKind, p: Posture): boolean =>
    (k.restingPostures ?? ['upright', 'lying', 'upside-down']).includes(p);
  const postures: (Posture | undefined)[] = kinds.map(() => undefined);
  const [udMin, udMax] = spec.draw.upsideDown ?? [0, 0];
  const flippable = kinds.map((k, i) => (can(k, 'upside-down') ? i : -1)).filter((i) => i >= 0);
  const upsideDown = rng.int(Math.min(udMin, flippable.length), Math.min(udMax, flippable.length));
  if (upsideDown < udMin) return undefined;
  for (const i of shuffled(flippable, rng).slice(0, upsideDown)) postures[i] = 'upside-down';
  for (const [i, k] of kinds.entries()) {
    if (postures[i]) continue;
    const allowed = spec.draw.postures.filter((p) => p !== 'upside-down' && can(k, p));
    if (allowed.length === 0) throw new Error(`tier ${spec.tier} allows no posture that ${k.id} can rest in`);
    postures[i] = allowed[rng.int(0, allowed.length - 1)];
  }
  const out = postures as Posture[];
  if (out.filter((p) => p !== 'upright').length < (spec.draw.minNotUpright ?? 0)) return undefined;
  return out;
}

interface Placed {
  readonly kind: ObjectKind;
  readonly posture: Posture;
  readonly pose: TablePose;
  readonly rect: OrientedRect;
}

function area(kind: ObjectKind, posture: Posture): number {
  const r = objectFootprint(kind, posture, { x: 0, y: 0, yawRad: 0 });
  return r.halfX * r.halfY;
}

function tryLayout(
  task: TaskDefinition,
  spec: TierSpec,
  rng: Rng,
): { fixtures: LayoutFixture[]; placed: Placed[] } | undefined {
  const fixtures = placeFixtures(task, spec, rng);
  if (!fixtures) return undefined;
  const fixtureRects = fixtures.map((f) => fixtureFootprint(fixtureKindOf(task, f.kind)!, f.pose));
  const count = rng.int(spec.minObjects, spec.maxObjects);
  const kinds = Array.from({ length: count }, () => {
    const id = spec.draw.kinds[rng.int(0, spec.draw.kinds.length - 1)];
    const kind = objectKindOf(task, id);
    if (!kind) throw new Error(`${task.id} tier ${spec.tier} draws kind '${id}', which it does not list`);
    return kind;
  });
  const postures = drawPostures(kinds, spec, rng);
  if (!postures) return undefined;
  // Largest first: random sequential placement packs far better that way (the 45-part tote).
  const order = kinds
    .map((kind, i) => ({ kind, posture: postures[i] }))
    .sort((a, b) => area(b.kind, b.posture) - area(a.kind, a.posture));

  const host = spec.draw.inFixture === undefined ? undefined : fixtures.find((f) => f.id === spec.draw.inFixture);
  if (spec.draw.inFixture !== undefined && !host)
    throw new Error(`${task.id} tier ${spec.tier} fills fixture '${spec.draw.inFixture}', which it does not place`);
  const hostRegion = host ? fixtureKindOf(task, host.kind)!.regions[0] : undefined;
  const c = task.clearances;

  const placed: Placed[] = [];
  for (const { kind, posture } of order) {
    let done: Placed | undefined;
    for (let attempt = 0; attempt < PLACEMENT_ATTEMPTS && !done; attempt++) {
      let pose: TablePose;
      if (host && hostRegion) {
        const hx = hostRegion.sizeM[0] / 2;
        const hy = hostRegion.sizeM[1] / 2;
        const lx = hostRegion.centerM[0] + rng.uniform(-hx, hx);
        const ly = hostRegion.centerM[1] + rng.uniform(-hy, hy);
        const cos = Math.cos(host.pose.yawRad);
        const sin = Math.sin(host.pose.yawRad);
        pose = roundPose(
          host.pose.x + cos * lx - sin * ly,
          host.pose.y + sin * lx + cos * ly,
          rng.uniform(-Math.PI, Math.PI),
        );
      } else {
        const w = task.workspace;
        pose = roundPose(rng.uniform(w.xMin, w.xMax), rng.uniform(w.yMin, w.yMax), rng.uniform(-Math.PI, Math.PI));
      }
      const rect = objectFootprint(kind, posture, pose);
      if (!reachable(pose.x, pose.y)) continue;
      if (host && hostRegion) {
        const hx = hostRegion.sizeM[0] / 2 - c.inFixtureWallM;
        const hy = hostRegion.sizeM[1] / 2 - c.inFixtureWallM;
        const inside = rectCorners(rect).every(([x, y]) => {
          const [lx, ly] = toFixtureFrame(host.pose, x, y);
          return Math.abs(lx - hostRegion.centerM[0]) <= hx && Math.abs(ly - hostRegion.centerM[1]) <= hy;
        });
        if (!inside || placed.some((p) => rectsOverlap(p.rect, rect, c.inFixtureObjectM))) continue;
      } else {
        if (!rectInside(rect, task.workspace)) continue;
        if (fixtureRects.some((f) => rectsOverlap(f, rect, c.fixtureM))) continue;
        if (ARM_BASE_RECTS.some((b) => rectsOverlap(b, rect, c.objectM))) continue;
        if (ARM_KEEP_OUT_RECTS.some((k) => rectsOverlap(k, rect, c.objectM))) continue;
        if (placed.some((p) => rectsOverlap(p.rect, rect, c.objectM))) continue;
      }
      done = { kind, posture, pose, rect };
    }
    if (!done) return undefined;
    placed.push(done);
  }
  return { fixtures, placed };
}

/** One layout of a tier, drawn from rng. Throws LayoutSetError when the tier cannot be satisfied. */
export function sampleLayout(task: TaskDefinition, tier: number, index: number, rng: Rng): Layout {
  const spec = tierSpec(task, tier);
  for (let attempt = 0; attempt < LAYOUT_ATTEMPTS; attempt++) {
    const drawn = tryLayout(task, spec, rng);
    if (!drawn) continue;
    const perCategory = new Map<string, number>();
    const objects: LayoutObject[] = drawn.placed.map((p) => {
      const category = categoryOf(p.kind);
      const n = (perCategory.get(category) ?? 0) + 1;
      perCategory.set(category, n);
      return {
        id: `${category}-${n}`,
        kind: p.kind.id,
        posture: p.posture,
        pose: p.pose,
        ...(spec.draw.inFixture ? { inFixture: spec.draw.inFixture } : {}),
      };
    });
    return { index, tier, fixtures: drawn.fixtures, objects };
  }
  throw new LayoutSetError(
    `Could not sample a tier ${tier} layout for ${task.id} in ${LAYOUT_ATTEMPTS} attempts: its objects do not fit the workspace with the required clearance and reach.`,
  );
}

/**
 * perTier layouts for each tier in order; every layout draws from its own fork of the seed's
 * stream. With a focus, each layout is drawn again (new forks) until it passes the focus.
 */
export function sampleLayouts(
  task: TaskDefinition,
  tiers: readonly number[],
  perTier: number,
  rng: Rng,
  focus?: LayoutFocusRule,
): Layout[] {
  const layouts: Layout[] = [];
  for (const tier of tiers) {
    tierSpec(task, tier);
    for (let i = 0; i < perTier; i++) {
      if (!focus) {
        layouts.push(sampleLayout(task, tier, layouts.length, rng.fork()));
        continue;
      }
      let found: Layout | undefined;
      for (let draw = 0; draw < FOCUS_DRAWS && !found; draw++) {
        const l = sampleLayout(task, tier, layouts.length, rng.fork());
        if (focusAccepts(focus, l)) found = l;
      }
      if (!found)
        throw new LayoutSetError(
          `No tier ${tier} layout of ${task.id} in ${FOCUS_DRAWS} draws has ${focusWords(focus)}; ask for fewer, or for higher tiers.`,
        );
      layouts.push(found);
    }
  }
  return layouts;
}
