/**
 * What the projector shows, as SVG in projector pixels: a layout's object footprints on the
 * table plane, the calibration crosshairs, and nothing (black).
 *
 * Everything is laid out in table millimetres and mapped through the calibration's homography.
 * Outlines are polygons through mapped corners — a homography maps straight lines to straight
 * lines, so the warped outline is exact. Footprints, not tops: a tall object's top would land
 * off its base by parallax, so the operator sets each object down inside its own outline.
 * Text and arrow heads are small, so they are drawn with the homography's local affine
 * approximation (its Jacobian at the spot), which keeps them reading square on the table
 * whatever the projector's keystone.
 *
 * Colours for a black background on a pale table: white outlines (the part an operator aligns
 * to), cyan posture cues, yellow names, dim grey for the table edge and fixtures. Colour is never
 * the only cue: each posture has its own shape and word.
 */
import { STATION_ARMS, ARM_BASE_XY_M, TABLE_RECT } from '../../src/tasks/station.js';
import {
  fixtureFootprint,
  objectFootprint,
  partFootprints,
  rectCorners,
  rectsOverlap,
  type OrientedRect,
} from '../../src/tasks/footprint.js';
import { getTask } from '../../src/tasks/registry.js';
import type { FixtureKind, LayoutObject, ObjectKind, Posture } from '../../src/tasks/types.js';
import { layoutAt, type LayoutSet } from '../../src/layouts/layout-set.js';
import { mapPoint, type Mat3, type Vec2 } from './homography.js';
import type { ProjectorCalibration, ProjectorResolution } from './calibration-record.js';

/** Where the operator stands to read the labels. */
export type ReaderSide = 'far' | 'near' | 'left' | 'right';

export interface ProjectionOptions {
  /** far (default): across the table from the arms, facing them; near: behind the arms. */
  readonly readerSide?: ReaderSide;
}

export const OUTLINE_COLOUR = '#ffffff';
export const CUE_COLOUR = '#00e5ff';
export const LABEL_COLOUR = '#ffd400';
const TABLE_COLOUR = '#5a5a5a';
const FIXTURE_COLOUR = '#6f8fb8';
const CAPTION_COLOUR = '#9a9a9a';

/** Outline width on the table, mm (thinner on parts too small to hold it). */
export const OUTLINE_MM = 3;

/** The reader's right and "towards the reader" on the table, unit vectors in the table frame. */
function readerAxes(side: ReaderSide): { right: Vec2; down: Vec2 } {
  switch (side) {
    case 'far':
      return { right: [0, 1], down: [1, 0] };
    case 'near':
      return { right: [0, -1], down: [-1, 0] };
    case 'left':
      return { right: [-1, 0], down: [0, 1] };
    case 'right':
      return { right: [1, 0], down: [0, -1] };
  }
}

const n = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '0');
const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Drawing on the table plane in mm, emitted in projector px. */
class TableCanvas {
  readonly parts: string[] = [];
  constructor(private readonly h: Mat3) {}

  px(p: Vec2): [number, number] {
    return mapPoint(this.h, p);
  }

  /** Projector px per table mm around p (the local scale), for stroke widths. */
  scaleAt(p: Vec2): number {
    const j = this.jacobian(p);
    return Math.sqrt(Math.abs(j[0] * j[3] - j[1] * j[2]));
  }

  /** d(px)/d(mm) at p: [du/dx, du/dy, dv/dx, dv/dy]. */
  jacobian(p: Vec2): [number, number, number, number] {
    const e = 1;
    const ax = this.px([p[0] + e, p[1]]);
    const bx = this.px([p[0] - e, p[1]]);
    const ay = this.px([p[0], p[1] + e]);
    const by = this.px([p[0], p[1] - e]);
    return [(ax[0] - bx[0]) / (2 * e), (ay[0] - by[0]) / (2 * e), (ax[1] - bx[1]) / (2 * e), (ay[1] - by[1]) / (2 * e)];
  }

  polygon(pts: readonly Vec2[], attrs: string): void {
    this.parts.push(`<polygon points="${pts.map((p) => this.px(p).map(n).join(',')).join(' ')}" ${attrs}/>`);
  }

  polyline(pts: readonly Vec2[], attrs: string): void {
    this.parts.push(
      `<polyline points="${pts.map((p) => this.px(p).map(n).join(',')).join(' ')}" fill="none" ${attrs}/>`,
    );
  }

  /**
   * Text laid on the table at p (mm), its baseline along `right`, letters sizeMm tall, drawn with
   * the local affine map so it is not sheared by the keystone.
   */
  text(p: Vec2, s: string, sizeMm: number, right: Vec2, down: Vec2, attrs: string): void {
    const j = this.jacobian(p);
    const [u, v] = this.px(p);
    const a = [j[0] * right[0] + j[1] * right[1], j[2] * right[0] + j[3] * right[1]];
    const c = [j[0] * down[0] + j[1] * down[1], j[2] * down[0] + j[3] * down[1]];
    this.parts.push(
      `<text transform="matrix(${n(a[0])} ${n(a[1])} ${n(c[0])} ${n(c[1])} ${n(u)} ${n(v)})" font-size="${n(sizeMm)}" ${attrs}>${esc(s)}</text>`,
    );
  }
}

const mm = (r: OrientedRect): OrientedRect => ({
  cx: r.cx * 1000,
  cy: r.cy * 1000,
  halfX: r.halfX * 1000,
  halfY: r.halfY * 1000,
  yawRad: r.yawRad,
});
const corners = (r: OrientedRect): Vec2[] => rectCorners(r).map(([x, y]) => [x, y] as Vec2);
const along = (p: Vec2, yaw: number, d: number): Vec2 => [p[0] + Math.cos(yaw) * d, p[1] + Math.sin(yaw) * d];
const across = (p: Vec2, yaw: number, d: number): Vec2 => [p[0] - Math.sin(yaw) * d, p[1] + Math.cos(yaw) * d];

/** An arrow on the table from `from` to `to` (mm), head sized to the arrow. */
function arrow(c: TableCanvas, from: Vec2, to: Vec2, widthMm: number, colour: string): void {
  const len = Math.hypot(to[0] - from[0], to[1] - from[1]);
  const yaw = Math.atan2(to[1] - from[1], to[0] - from[0]);
  const head = Math.min(len * 0.45, Math.max(widthMm * 3, len * 0.3));
  const neck = along(to, yaw, -head);
  const s = c.scaleAt(from);
  c.polyline([from, neck], `stroke="${colour}" stroke-width="${n(widthMm * s)}" stroke-linecap="round"`);
  c.polygon([to, across(neck, yaw, head * 0.55), across(neck, yaw, -head * 0.55)], `fill="${colour}"`);
}

const POSTURE_WORD: Readonly<Record<Posture, string>> = {
  upright: 'upright',
  lying: 'lying',
  'upside-down': 'upside down',
};

function shortId(id: string): string {
  const m = /^(.*)-(\d+)$/.exec(id);
  const short: Readonly<Record<string, string>> = { screw: 's', bolt: 'b', nut: 'n', 'bearing-ring': 'r' };
  return m ? `${short[m[1]] ?? m[1].slice(0, 1)}${m[2]}` : id;
}

/** Where labels may not go: footprints (inflated) and labels already placed, mm. */
type Occupied = OrientedRect[];

/**
 * A label's box beside a footprint, on the first side (towards the reader, away, right, left)
 * where it covers no footprint and no other label; towards the reader if none is free.
 */
function placeLabel(
  rect: OrientedRect,
  widthMm: number,
  heightMm: number,
  firstLineMm: number,
  gapMm: number,
  axes: { right: Vec2; down: Vec2 },
  occupied: Occupied,
): { at: Vec2; box: OrientedRect } {
  const centre: Vec2 = [rect.cx, rect.cy];
  const cs = corners(rect);
  const reach = (d: Vec2) => Math.max(...cs.map((p) => (p[0] - centre[0]) * d[0] + (p[1] - centre[1]) * d[1]));
  const yawDown = Math.atan2(axes.down[1], axes.down[0]);
  const boxAt = (mid: Vec2): OrientedRect => ({
    cx: mid[0],
    cy: mid[1],
    halfX: heightMm / 2,
    halfY: widthMm / 2,
    yawRad: yawDown,
  });
  const candidates: Vec2[] = [];
  for (const [d, half] of [
    [axes.down, heightMm / 2],
    [[-axes.down[0], -axes.down[1]] as Vec2, heightMm / 2],
    [axes.right, widthMm / 2],
    [[-axes.right[0], -axes.right[1]] as Vec2, widthMm / 2],
  ] as const) {
    const dist = reach(d) + gapMm + half;
    candidates.push([centre[0] + d[0] * dist, centre[1] + d[1] * dist]);
  }
  const free = candidates.find((mid) => !occupied.some((o) => rectsOverlap(o, boxAt(mid))));
  const mid = free ?? candidates[0];
  // Text is anchored at its first baseline, just under the box's edge away from the reader.
  const baseline = -heightMm / 2 + firstLineMm * 0.95;
  const at: Vec2 = [mid[0] + axes.down[0] * baseline, mid[1] + axes.down[1] * baseline];
  return { at, box: boxAt(mid) };
}

const ID_MM = 24;
const POSTURE_MM = 18;
const ID_MM_CROWDED = 11;

function drawObject(
  c: TableCanvas,
  o: LayoutObject,
  kind: ObjectKind,
  axes: { right: Vec2; down: Vec2 },
  crowded: boolean,
  occupied: Occupied,
): void {
  const rect = mm(objectFootprint(kind, o.posture, o.pose));
  const centre: Vec2 = [rect.cx, rect.cy];
  const yaw = o.pose.yawRad;
  const minHalf = Math.min(rect.halfX, rect.halfY);
  const scale = c.scaleAt(centre);
  const outlineMm = Math.min(OUTLINE_MM, minHalf * 0.4);
  const [r, g, b] = kind.color;
  // The footprint: a faint fill of the object's colour (dim on black, never mistaken for an
  // outline); its white outline, which the operator sets the object inside, comes last.
  c.polygon(corners(rect), `fill="rgb(${r},${g},${b})" fill-opacity="0.3"`);
  // Box parts (a mug's handle, a bolt's head) show which way the object is turned.
  const boxes = partFootprints(kind, o.posture, o.pose)
    .filter((_, i) => kind.parts[i].shape.type === 'box')
    .map(mm);
  for (const part of boxes) c.polygon(corners(part), `fill="${CUE_COLOUR}" fill-opacity="0.85"`);
  const cueMm = Math.max(1, Math.min(4, minHalf * 0.15));
  if (o.posture === 'lying') {
    // Lying: an arrow along its axis from base to top.
    const half = rect.halfX * 0.75;
    arrow(c, along(centre, yaw, -half), along(centre, yaw, half), cueMm, CUE_COLOUR);
  } else {
    if (o.posture === 'upright') {
      // Upright: a dot in the middle.
      const d = minHalf * 0.28;
      const ring: Vec2[] = Array.from({ length: 24 }, (_, i) => [
        centre[0] + d * Math.cos((i / 24) * 2 * Math.PI),
        centre[1] + d * Math.sin((i / 24) * 2 * Math.PI),
      ]);
      c.polygon(ring, `fill="${CUE_COLOUR}"`);
    } else {
      // Upside down: a cross over the footprint.
      const cs = corners({ ...rect, halfX: rect.halfX * 0.6, halfY: rect.halfY * 0.6 });
      c.polyline([cs[0], cs[2]], `stroke="${CUE_COLOUR}" stroke-width="${n(cueMm * scale)}" stroke-linecap="round"`);
      c.polyline([cs[1], cs[3]], `stroke="${CUE_COLOUR}" stroke-width="${n(cueMm * scale)}" stroke-linecap="round"`);
    }
    // Which way it is turned, for objects that have a way (a mug's handle): an arrow from the
    // middle to that part, inside the outline. Round objects (a bottle) have none, so no arrow.
    const part = boxes[0];
    if (part && minHalf > 12) {
      const dir = Math.atan2(part.cy - centre[1], part.cx - centre[0]);
      const toPart = Math.hypot(part.cx - centre[0], part.cy - centre[1]) - Math.min(part.halfX, part.halfY) - 2;
      const from = minHalf * 0.28 + 2;
      if (toPart > from + 8) arrow(c, along(centre, dir, from), along(centre, dir, toPart), cueMm, CUE_COLOUR);
    }
  }
  // The outline last, over the cues: a handle at the rim must not hide any of it.
  c.polygon(
    corners(rect),
    `fill="none" stroke="${OUTLINE_COLOUR}" stroke-width="${n(outlineMm * scale)}" stroke-linejoin="miter" class="footprint" data-id="${esc(o.id)}"`,
  );
  // Name and posture beside the footprint, reading square to the operator.
  const idMm = crowded ? ID_MM_CROWDED : ID_MM;
  const name = crowded ? shortId(o.id) : o.id;
  const word = POSTURE_WORD[o.posture];
  const widthMm = Math.max(name.length * idMm * 0.68, crowded ? 0 : word.length * POSTURE_MM * 0.6);
  const heightMm = crowded ? idMm * 1.2 : idMm * 1.2 + POSTURE_MM * 1.2;
  const { at, box } = placeLabel(rect, widthMm, heightMm, idMm, outlineMm + 4, axes, occupied);
  occupied.push(box);
  c.text(at, name, idMm, axes.right, axes.down, `fill="${LABEL_COLOUR}" text-anchor="middle" font-weight="bold"`);
  if (!crowded)
    c.text(
      [at[0] + axes.down[0] * idMm * 1.15, at[1] + axes.down[1] * idMm * 1.15],
      word,
      POSTURE_MM,
      axes.right,
      axes.down,
      `fill="${LABEL_COLOUR}" text-anchor="middle"`,
    );
}

function drawFixture(
  c: TableCanvas,
  kind: FixtureKind,
  pose: { x: number; y: number; yawRad: number },
  axes: { right: Vec2; down: Vec2 },
): void {
  const rect = mm(fixtureFootprint(kind, pose));
  const s = c.scaleAt([rect.cx, rect.cy]);
  c.polygon(
    corners(rect),
    `fill="none" stroke="${FIXTURE_COLOUR}" stroke-width="${n(3 * s)}" stroke-dasharray="${n(12 * s)},${n(8 * s)}" class="fixture"`,
  );
  const cs = Math.cos(pose.yawRad);
  const sn = Math.sin(pose.yawRad);
  if (kind.regions.length > 1) {
    for (const region of kind.regions) {
      const cx = pose.x + cs * region.centerM[0] - sn * region.centerM[1];
      const cy = pose.y + sn * region.centerM[0] + cs * region.centerM[1];
      c.polygon(
        corners(mm({ cx, cy, halfX: region.sizeM[0] / 2, halfY: region.sizeM[1] / 2, yawRad: pose.yawRad })),
        `fill="none" stroke="${FIXTURE_COLOUR}" stroke-width="${n(1.5 * s)}"`,
      );
    }
  }
  // Its name just outside its reader-side edge, where objects inside it cannot cover it.
  const reach = Math.max(
    ...corners(rect).map((p) => (p[0] - rect.cx) * axes.down[0] + (p[1] - rect.cy) * axes.down[1]),
  );
  c.text(
    [rect.cx + axes.down[0] * (reach + 22), rect.cy + axes.down[1] * (reach + 22)],
    kind.name,
    16,
    axes.right,
    axes.down,
    `fill="${FIXTURE_COLOUR}" text-anchor="middle"`,
  );
}

const svgOpen = (res: ProjectorResolution): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${res.widthPx}" height="${res.heightPx}" viewBox="0 0 ${res.widthPx} ${res.heightPx}"><style>text{font-family:'DejaVu Sans',sans-serif}</style><rect width="${res.widthPx}" height="${res.heightPx}" fill="#000"/>`;

/** The SVG the projector shows for layout `index` of `set`, in the calibration's projector pixels. */
export function projectedLayoutSvg(
  set: LayoutSet,
  index: number,
  calibration: ProjectorCalibration,
  opts: ProjectionOptions = {},
): string {
  const task = getTask(set.task);
  const layout = layoutAt(set, index);
  const axes = readerAxes(opts.readerSide ?? 'far');
  const c = new TableCanvas(calibration.tableToProjector);
  const t = {
    x0: TABLE_RECT.xMin * 1000,
    x1: TABLE_RECT.xMax * 1000,
    y0: TABLE_RECT.yMin * 1000,
    y1: TABLE_RECT.yMax * 1000,
  };
  // The table edge, dim: if it lies on the real edge, the calibration still holds.
  const s0 = c.scaleAt([0, 0]);
  c.polygon(
    [
      [t.x1, t.y1],
      [t.x1, t.y0],
      [t.x0, t.y0],
      [t.x0, t.y1],
    ],
    `fill="none" stroke="${TABLE_COLOUR}" stroke-width="${n(2 * s0)}" class="table-edge"`,
  );
  // Arm bases, so the picture can be told apart from its mirror image at a glance.
  for (const arm of STATION_ARMS) {
    const [bx, by] = ARM_BASE_XY_M[arm].map((v) => v * 1000);
    c.text(
      [bx, by],
      arm === 'left' ? 'L' : 'R',
      40,
      axes.right,
      axes.down,
      `fill="${TABLE_COLOUR}" text-anchor="middle" font-weight="bold"`,
    );
  }
  for (const fx of layout.fixtures) {
    const kind = task.fixtureKinds.find((k) => k.id === fx.kind);
    if (kind) drawFixture(c, kind, fx.pose, axes);
  }
  const crowded = layout.objects.length > 12;
  const kindOf = (o: LayoutObject) => task.objectKinds.find((k) => k.id === o.kind);
  // Labels keep off every footprint, not only those drawn before them.
  const occupied: Occupied = layout.objects.flatMap((o) => {
    const kind = kindOf(o);
    if (!kind) return [];
    const r = mm(objectFootprint(kind, o.posture, o.pose));
    return [{ ...r, halfX: r.halfX + 4, halfY: r.halfY + 4 }];
  });
  for (const o of layout.objects) {
    const kind = kindOf(o);
    if (kind) drawObject(c, o, kind, axes, crowded, occupied);
  }
  // Which layout this is, along the reader's edge of the table.
  const edge = Math.max(
    ...[
      [t.x1, t.y1],
      [t.x0, t.y0],
    ].map(([x, y]) => x * axes.down[0] + y * axes.down[1]),
  );
  const captionAt: Vec2 = [axes.down[0] * (edge - 22), axes.down[1] * (edge - 22)];
  c.text(
    captionAt,
    `${task.id} · layout ${layout.index} · tier ${layout.tier} · set v${set.version} ${set.sha256.slice(0, 12)} · calibration ${calibration.sha256.slice(0, 8)}`,
    14,
    axes.right,
    axes.down,
    `fill="${CAPTION_COLOUR}" text-anchor="middle"`,
  );
  return `${svgOpen(calibration.resolution)}${c.parts.join('')}</svg>`;
}

export interface Crosshair {
  readonly px: Vec2;
  readonly label?: string;
}

/**
 * Calibration crosshairs at projector pixels, numbered, for the operator to align with the
 * table's corners or fiducials. `predicted` (optional, one per crosshair) marks where the
 * fitted calibration puts each table point: a ring off its crosshair shows that pair's error.
 */
export function crosshairSvg(
  res: ProjectorResolution,
  crosshairs: readonly Crosshair[],
  predicted?: readonly Vec2[],
): string {
  const out: string[] = [svgOpen(res)];
  const arm = Math.round(Math.min(res.widthPx, res.heightPx) / 30);
  const font = Math.max(14, Math.round(arm * 0.7));
  crosshairs.forEach((ch, i) => {
    const [u, v] = ch.px;
    out.push(`<g class="crosshair">`);
    // A gap in the middle so the fiducial under it stays visible.
    const gap = 4;
    for (const [dx, dy] of [
      [1, 0],
      [-1, 0],
      [0, 1],
      [0, -1],
    ]) {
      out.push(
        `<line x1="${n(u + dx * gap)}" y1="${n(v + dy * gap)}" x2="${n(u + dx * arm)}" y2="${n(v + dy * arm)}" stroke="#fff" stroke-width="2"/>`,
      );
    }
    out.push(`<circle cx="${n(u)}" cy="${n(v)}" r="${n(arm * 0.55)}" fill="none" stroke="#fff" stroke-width="1.5"/>`);
    const left = u > res.widthPx - arm * 4;
    const up = v < arm * 2;
    out.push(
      `<text x="${n(u + (left ? -1 : 1) * arm * 0.75)}" y="${n(v + (up ? arm * 0.75 + font : -arm * 0.75))}" font-size="${font}" fill="${LABEL_COLOUR}" font-weight="bold" text-anchor="${left ? 'end' : 'start'}">${esc(`${i + 1}${ch.label ? ` ${ch.label}` : ''}`)}</text>`,
    );
    const p = predicted?.[i];
    if (p)
      out.push(`<circle cx="${n(p[0])}" cy="${n(p[1])}" r="6" fill="none" stroke="${CUE_COLOUR}" stroke-width="2"/>`);
    out.push('</g>');
  });
  out.push('</svg>');
  return out.join('');
}
