/**
 * A top-down SVG picture of one layout: table, arm bases and their reach, fixtures with their
 * slots, objects with ids and posture, and a caption with the set's hash prefix and the tier.
 * Pure string building so the station UI can show the same picture; the CLI rasterises it.
 *
 * The picture looks at the table from above with the robot at the bottom: table +x (away from
 * the arms) points up the image, table +y (the robot's left) points left.
 */
import { ARM_BASE_XY_M, ARM_HOME_KEEP_OUT, ARM_REACH_MAX_M, STATION_ARMS, TABLE_RECT } from '../tasks/station.js';
import {
  fixtureFootprint,
  objectFootprint,
  partFootprints,
  partsBounds,
  rectCorners,
  type OrientedRect,
} from '../tasks/footprint.js';
import { getTask } from '../tasks/registry.js';
import type { FixtureKind, LayoutObject, ObjectKind, Posture } from '../tasks/types.js';
import type { LayoutSet } from './layout-set.js';
import { layoutAt } from './layout-set.js';

export interface TopViewFrame {
  readonly widthPx: number;
  readonly heightPx: number;
  /** Image pixel (column, row) of a table point. */
  toImage(x: number, y: number): [number, number];
  readonly pxPerM: number;
}

const CAPTION_FRACTION = 0.13;
const MARGIN_FRACTION = 0.025;

/** Where the table lands in a square picture of sizePx: shared by the drawing and its tests. */
export function topViewFrame(sizePx: number): TopViewFrame {
  const margin = sizePx * MARGIN_FRACTION;
  const caption = sizePx * CAPTION_FRACTION;
  const tableW = TABLE_RECT.yMax - TABLE_RECT.yMin;
  const tableH = TABLE_RECT.xMax - TABLE_RECT.xMin;
  const pxPerM = Math.min((sizePx - 2 * margin) / tableW, (sizePx - 2 * margin - caption) / tableH);
  const left = (sizePx - tableW * pxPerM) / 2;
  const top = margin;
  return {
    widthPx: sizePx,
    heightPx: sizePx,
    pxPerM,
    toImage: (x, y) => [left + (TABLE_RECT.yMax - y) * pxPerM, top + (TABLE_RECT.xMax - x) * pxPerM],
  };
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const rgb = (c: readonly [number, number, number]): string => `rgb(${c[0]},${c[1]},${c[2]})`;
const n = (v: number): string => v.toFixed(1);

function polygon(f: TopViewFrame, r: OrientedRect, attrs: string): string {
  const pts = rectCorners(r)
    .map(([x, y]) => f.toImage(x, y).map(n).join(','))
    .join(' ');
  return `<polygon points="${pts}" ${attrs}/>`;
}

function bodyRadiusM(kind: ObjectKind): number {
  const b = partsBounds(kind.parts);
  // The round body, without a handle sticking out along +y.
  return (b.max[0] - b.min[0]) / 2;
}

const SHORT: Readonly<Record<string, string>> = { screw: 's', bolt: 'b', nut: 'n', 'bearing-ring': 'r' };
function shortId(id: string): string {
  const m = /^(.*)-(\d+)$/.exec(id);
  return m ? `${SHORT[m[1]] ?? m[1].slice(0, 1)}${m[2]}` : id;
}

const POSTURE_WORD: Readonly<Record<Posture, string>> = {
  upright: 'upright',
  lying: 'lying',
  'upside-down': 'upside down',
};

function drawObject(f: TopViewFrame, o: LayoutObject, kind: ObjectKind, label: string, fontPx: number): string {
  const rect = objectFootprint(kind, o.posture, o.pose);
  const color = rgb(kind.color);
  const [cx, cy] = f.toImage(o.pose.x, o.pose.y);
  const out: string[] = [];
  const dir = (lenM: number): [number, number] =>
    f.toImage(o.pose.x + Math.cos(o.pose.yawRad) * lenM, o.pose.y + Math.sin(o.pose.yawRad) * lenM);
  const stroke = Math.max(1, f.pxPerM * 0.003);
  const partRects = partFootprints(kind, o.posture, o.pose);
  if (o.posture === 'lying') {
    // Parts only a few pixels wide (an M3 screw) get a hairline outline and no arrow, so their
    // colour still shows; their head part already tells which way they point.
    const thin = rect.halfY * f.pxPerM < 5;
    const outline = thin ? 0.6 : stroke;
    out.push(polygon(f, rect, `fill="${color}" fill-opacity="0.35" stroke="${color}" stroke-width="${n(outline)}"`));
    partRects.forEach((r, i) => {
      if (kind.parts[i].shape.type !== 'box')
        out.push(polygon(f, r, `fill="${color}" stroke="#222" stroke-width="${n(outline)}"`));
    });
    if (!thin) {
      // An arrow along the axis from base to top.
      const half = rect.halfX * 0.8;
      const [ax, ay] = dir(-half);
      const [bx, by] = dir(half);
      out.push(
        `<line x1="${n(ax)}" y1="${n(ay)}" x2="${n(bx)}" y2="${n(by)}" stroke="#fff" stroke-width="${n(Math.min(stroke * 1.5, rect.halfY * f.pxPerM * 0.5))}"/>`,
      );
      const head = rect.halfY * 0.8;
      const c = Math.cos(o.pose.yawRad);
      const s = Math.sin(o.pose.yawRad);
      const tip = [o.pose.x + c * half, o.pose.y + s * half];
      const wing = (side: number) =>
        f.toImage(tip[0] - c * head - s * head * side * 0.7, tip[1] - s * head + c * head * side * 0.7);
      const pts = [f.toImage(tip[0], tip[1]), wing(1), wing(-1)].map((p) => p.map(n).join(',')).join(' ');
      out.push(`<polygon points="${pts}" fill="#fff"/>`);
    }
  } else {
    out.push(polygon(f, rect, `fill="${color}" fill-opacity="0.35" stroke="${color}" stroke-width="${n(stroke)}"`));
    const r = bodyRadiusM(kind) * f.pxPerM;
    if (o.posture === 'upright') {
      out.push(
        `<circle cx="${n(cx)}" cy="${n(cy)}" r="${n(r)}" fill="${color}" stroke="#222" stroke-width="${n(stroke)}"/>`,
      );
    } else {
      out.push(
        `<circle cx="${n(cx)}" cy="${n(cy)}" r="${n(r)}" fill="${color}" stroke="#222" stroke-width="${n(stroke)}" stroke-dasharray="${n(stroke * 3)},${n(stroke * 2)}"/>`,
      );
      const d = r * 0.6;
      out.push(
        `<path d="M${n(cx - d)},${n(cy - d)} L${n(cx + d)},${n(cy + d)} M${n(cx - d)},${n(cy + d)} L${n(cx + d)},${n(cy - d)}" stroke="#fff" stroke-width="${n(stroke * 1.5)}"/>`,
      );
    }
  }
  // Box parts (a mug's handle, a bolt's head) show which way the object is turned.
  partRects.forEach((r, i) => {
    const outline = Math.min(stroke, Math.min(r.halfX, r.halfY) * f.pxPerM * 0.4);
    if (kind.parts[i].shape.type === 'box')
      out.push(polygon(f, r, `fill="${color}" stroke="#222" stroke-width="${n(Math.max(0.5, outline))}"`));
  });
  // Label beside the footprint, on the side away from the robot.
  const topPx = Math.min(...rectCorners(rect).map(([x, y]) => f.toImage(x, y)[1]));
  out.push(
    `<text x="${n(cx)}" y="${n(topPx - fontPx * 0.3)}" font-size="${n(fontPx)}" text-anchor="middle" class="label">${esc(label)}</text>`,
  );
  return `<g id="${esc(o.id)}">${out.join('')}</g>`;
}

function drawFixture(
  f: TopViewFrame,
  id: string,
  kind: FixtureKind,
  pose: { x: number; y: number; yawRad: number },
  fontPx: number,
): string {
  const rect = fixtureFootprint(kind, pose);
  const color = rgb(kind.color);
  const out = [
    polygon(
      f,
      rect,
      `fill="${color}" fill-opacity="0.18" stroke="${color}" stroke-width="${n(Math.max(1.5, f.pxPerM * 0.005))}"`,
    ),
  ];
  const c = Math.cos(pose.yawRad);
  const s = Math.sin(pose.yawRad);
  for (const region of kind.regions) {
    const cxM = pose.x + c * region.centerM[0] - s * region.centerM[1];
    const cyM = pose.y + s * region.centerM[0] + c * region.centerM[1];
    if (kind.regions.length > 1) {
      out.push(
        polygon(
          f,
          { cx: cxM, cy: cyM, halfX: region.sizeM[0] / 2, halfY: region.sizeM[1] / 2, yawRad: pose.yawRad },
          `fill="none" stroke="${color}" stroke-width="1"`,
        ),
      );
    }
    const [tx, ty] = f.toImage(cxM, cyM);
    if (kind.regions.length > 1) {
      const name = region.id
        .replace(/^slot:/, '')
        .replace('bearing-ring', 'rings')
        .replace(/^(screw|bolt|nut)$/, '$1s');
      out.push(
        `<text x="${n(tx)}" y="${n(ty)}" font-size="${n(fontPx * 0.9)}" text-anchor="middle" class="fixture">${esc(name)}</text>`,
      );
      if (region.needsHandover)
        out.push(
          `<text x="${n(tx)}" y="${n(ty + fontPx)}" font-size="${n(fontPx * 0.7)}" text-anchor="middle" class="fixture">(handover)</text>`,
        );
    }
  }
  const [lx, ly] = f.toImage(pose.x - c * kind.footprintHalfM[0], pose.y);
  out.push(
    `<text x="${n(lx)}" y="${n(ly + fontPx * 1.1)}" font-size="${n(fontPx)}" text-anchor="middle" class="fixture-name">${esc(kind.name)}${kind.movable ? ' (movable)' : ''}</text>`,
  );
  return `<g id="fixture-${esc(id)}">${out.join('')}</g>`;
}

/** The SVG of layout `index` of `set`, sizePx square. */
export function layoutTopViewSvg(set: LayoutSet, index: number, sizePx: number): string {
  const task = getTask(set.task);
  const layout = layoutAt(set, index);
  const f = topViewFrame(sizePx);
  const fontPx = Math.max(9, sizePx / 62);
  const parts: string[] = [];
  const [tx0, ty0] = f.toImage(TABLE_RECT.xMax, TABLE_RECT.yMax);
  const [tx1, ty1] = f.toImage(TABLE_RECT.xMin, TABLE_RECT.yMin);
  parts.push(`<rect width="${sizePx}" height="${sizePx}" fill="#ffffff"/>`);
  parts.push(
    `<clipPath id="table"><rect x="${n(tx0)}" y="${n(ty0)}" width="${n(tx1 - tx0)}" height="${n(ty1 - ty0)}"/></clipPath>`,
  );
  parts.push(
    `<rect x="${n(tx0)}" y="${n(ty0)}" width="${n(tx1 - tx0)}" height="${n(ty1 - ty0)}" fill="#efe9dc" stroke="#8a8170" stroke-width="2"/>`,
  );
  // A 10 cm grid helps an operator judge distances.
  for (let x = Math.ceil(TABLE_RECT.xMin * 10) / 10; x <= TABLE_RECT.xMax + 1e-9; x += 0.1) {
    const [, yy] = f.toImage(x, 0);
    parts.push(`<line x1="${n(tx0)}" y1="${n(yy)}" x2="${n(tx1)}" y2="${n(yy)}" stroke="#ddd5c4" stroke-width="1"/>`);
  }
  for (let y = Math.ceil(TABLE_RECT.yMin * 10) / 10; y <= TABLE_RECT.yMax + 1e-9; y += 0.1) {
    const [xx] = f.toImage(0, y);
    parts.push(`<line x1="${n(xx)}" y1="${n(ty0)}" x2="${n(xx)}" y2="${n(ty1)}" stroke="#ddd5c4" stroke-width="1"/>`);
  }
  const w = task.workspace;
  const [wx0, wy0] = f.toImage(w.xMax, w.yMax);
  const [wx1, wy1] = f.toImage(w.xMin, w.yMin);
  parts.push(
    `<rect x="${n(wx0)}" y="${n(wy0)}" width="${n(wx1 - wx0)}" height="${n(wy1 - wy0)}" fill="none" stroke="#6d8fb3" stroke-width="1.5" stroke-dasharray="8,5"/>`,
  );
  for (const arm of STATION_ARMS) {
    // Where the arm rests at home: lightly hatched grey, nothing is placed there.
    const k = ARM_HOME_KEEP_OUT[arm];
    const [kx0, ky0] = f.toImage(k.xMax, k.yMax);
    const [kx1, ky1] = f.toImage(k.xMin, k.yMin);
    parts.push(
      `<rect class="keep-out" x="${n(Math.min(kx0, kx1))}" y="${n(Math.min(ky0, ky1))}" width="${n(Math.abs(kx1 - kx0))}" height="${n(Math.abs(ky1 - ky0))}" fill="#8c96a1" fill-opacity="0.15" stroke="#8c96a1" stroke-width="1" stroke-dasharray="2,3"/>`,
    );
  }
  for (const arm of STATION_ARMS) {
    const [bx, by] = f.toImage(ARM_BASE_XY_M[arm][0], ARM_BASE_XY_M[arm][1]);
    parts.push(
      `<circle cx="${n(bx)}" cy="${n(by)}" r="${n(ARM_REACH_MAX_M * f.pxPerM)}" fill="none" stroke="#8c96a1" stroke-width="1.2" stroke-dasharray="3,4" clip-path="url(#table)"/>`,
    );
    parts.push(`<circle cx="${n(bx)}" cy="${n(by)}" r="${n(0.055 * f.pxPerM)}" fill="#3b4450"/>`);
    parts.push(
      `<text x="${n(bx)}" y="${n(by + fontPx * 0.35)}" font-size="${n(fontPx)}" text-anchor="middle" fill="#fff" font-weight="bold">${arm === 'left' ? 'L' : 'R'}</text>`,
    );
  }
  for (const fx of layout.fixtures) {
    const kind = task.fixtureKinds.find((k) => k.id === fx.kind);
    if (kind) parts.push(drawFixture(f, fx.id, kind, fx.pose, fontPx));
  }
  const crowded = layout.objects.length > 12;
  const objFont = crowded ? fontPx * 0.75 : fontPx;
  for (const o of layout.objects) {
    const kind = task.objectKinds.find((k) => k.id === o.kind);
    if (kind)
      parts.push(drawObject(f, o, kind, crowded ? shortId(o.id) : `${o.id} · ${POSTURE_WORD[o.posture]}`, objFont));
  }
  const postureCounts = (['upright', 'lying', 'upside-down'] as const)
    .map((p) => [p, layout.objects.filter((o) => o.posture === p).length] as const)
    .filter(([, c]) => c > 0)
    .map(([p, c]) => `${c} ${POSTURE_WORD[p]}`)
    .join(', ');
  const captionTop = ty1 + fontPx * 1.6;
  const line1 = `${task.id} · layout ${layout.index} · tier ${layout.tier} · set v${set.version} sha256 ${set.sha256.slice(0, 12)}`;
  const line2 = `${layout.objects.length} object${layout.objects.length === 1 ? '' : 's'}: ${postureCounts}${crowded ? ' (s = screw, b = bolt, n = nut, r = bearing ring)' : ''}.`;
  const line3 =
    'Filled disc = upright, dashed disc with × = upside down, bar with arrow = lying (arrow points to its top).';
  parts.push(
    `<text x="${n(sizePx / 2)}" y="${n(captionTop)}" font-size="${n(fontPx * 1.2)}" text-anchor="middle" font-weight="bold" fill="#111">${esc(line1)}</text>`,
  );
  parts.push(
    `<text x="${n(sizePx / 2)}" y="${n(captionTop + fontPx * 1.5)}" font-size="${n(fontPx * 0.85)}" text-anchor="middle" fill="#333">${esc(line2)}</text>`,
  );
  parts.push(
    `<text x="${n(sizePx / 2)}" y="${n(captionTop + fontPx * 2.7)}" font-size="${n(fontPx * 0.85)}" text-anchor="middle" fill="#333">${esc(line3)}</text>`,
  );
  parts.push(
    `<text x="${n(sizePx / 2)}" y="${n(captionTop + fontPx * 3.9)}" font-size="${n(fontPx * 0.85)}" text-anchor="middle" fill="#333">Seen from above, robot at the bottom (L, R = arm bases, dotted = reach, grey = arm at home, dashed = workspace, grid 10 cm).</text>`,
  );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${sizePx}" height="${sizePx}" viewBox="0 0 ${sizePx} ${sizePx}"><style>text{font-family:'DejaVu Sans',sans-serif}.label{fill:#111}.fixture{fill:#7a1010}.fixture-name{fill:#333}</style>${parts.join('')}</svg>`;
}
