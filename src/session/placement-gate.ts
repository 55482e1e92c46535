/**
 * The placement check as a go gate: after the operator confirms placement, each object's measured
 * placement error (mm, degrees) against the layout, from the overhead camera, is held to a
 * threshold; over it the start is refused with the object named. Without a camera that can check
 * (none configured, or no calibration for it) the gate says so and the rollout runs unchecked —
 * journalled as such, so the report can tell checked from unchecked rollouts.
 * Pure: numbers and sentences.
 */

export interface PlacementThresholds {
  readonly maxErrorMm: number;
  readonly maxErrorDeg: number;
}

export const DEFAULT_PLACEMENT_THRESHOLDS: PlacementThresholds = { maxErrorMm: 10, maxErrorDeg: 10 };

export interface MeasuredObject {
  readonly id: string;
  /** Infinity: not seen near its place. */
  readonly errorMm: number;
  readonly shiftMm?: readonly [number, number];
  /** Absent: the object looks the same turned (round from above), so no angle is measured. */
  readonly errorDeg?: number;
}

export type PlacementCheck =
  | {
      readonly checked: true;
      readonly camera: string;
      readonly calibrationSha256: string;
      readonly objects: readonly MeasuredObject[];
    }
  | { readonly checked: false; readonly reason: string };

export interface PlacementVerdict {
  readonly pass: boolean;
  /** One sentence for the operator (the card, the terminal). */
  readonly sentence: string;
  /** The object over the threshold (refused), or the worst one (passed). */
  readonly object?: string;
  readonly maxErrorMm?: number;
  readonly maxErrorDeg?: number;
}

const mm = (x: number): string => `${x.toFixed(1)} mm`;

/** What the gate says of a check: pass, refuse naming the worst object over the threshold, or unchecked. */
export function placementVerdict(check: PlacementCheck, t: PlacementThresholds): PlacementVerdict {
  if (!check.checked)
    return { pass: true, sentence: `Placement not checked: ${check.reason}. This rollout runs unchecked.` };
  const objs = check.objects;
  const maxErrorMm = objs.reduce((a, o) => Math.max(a, o.errorMm), 0);
  const maxErrorDeg = objs.reduce((a, o) => Math.max(a, o.errorDeg ?? 0), 0);
  const missing = objs.find((o) => !Number.isFinite(o.errorMm));
  if (missing)
    return {
      pass: false,
      object: missing.id,
      maxErrorMm,
      maxErrorDeg,
      sentence: `${missing.id} is not where the layout puts it (the overhead camera does not see it on its outline): place it on its outline, then confirm again.`,
    };
  // The worst offender by how far over its limit it is, distance or turn.
  const over = objs
    .map((o) => ({ o, by: Math.max(o.errorMm / t.maxErrorMm, (o.errorDeg ?? 0) / t.maxErrorDeg) }))
    .sort((a, b) => b.by - a.by)[0];
  if (over && over.by > 1) {
    const o = over.o;
    const what =
      o.errorMm > t.maxErrorMm
        ? `${mm(o.errorMm)} from where the layout puts it (limit ${t.maxErrorMm} mm)`
        : `turned ${o.errorDeg!.toFixed(1)}° from its outline (limit ${t.maxErrorDeg}°)`;
    return {
      pass: false,
      object: o.id,
      maxErrorMm,
      maxErrorDeg,
      sentence: `${o.id} is ${what}: move it onto its outline, then confirm again.`,
    };
  }
  const worst = over?.o;
  return {
    pass: true,
    maxErrorMm,
    maxErrorDeg,
    ...(worst ? { object: worst.id } : {}),
    sentence: `Placement checked: every object within ${t.maxErrorMm} mm and ${t.maxErrorDeg}°${worst ? ` (worst ${worst.id}: ${mm(worst.errorMm)}${worst.errorDeg !== undefined ? `, ${worst.errorDeg.toFixed(1)}°` : ''})` : ''}.`,
  };
}

/** The journal's record of a check: what was measured, against which calibration and thresholds, and the verdict. */
export function placementJournalDetail(
  check: PlacementCheck,
  t: PlacementThresholds,
  v: PlacementVerdict,
): Record<string, unknown> {
  const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);
  return check.checked
    ? {
        checked: true,
        pass: v.pass,
        camera: check.camera,
        calibrationSha256: check.calibrationSha256,
        maxErrorMm: finite(v.maxErrorMm ?? 0),
        maxErrorDeg: v.maxErrorDeg ?? 0,
        thresholds: t,
        objects: check.objects.map((o) => ({
          id: o.id,
          errorMm: finite(o.errorMm),
          ...(o.shiftMm ? { shiftMm: o.shiftMm } : {}),
          ...(o.errorDeg !== undefined ? { errorDeg: o.errorDeg } : {}),
        })),
        ...(v.object ? { object: v.object } : {}),
        sentence: v.sentence,
      }
    : { checked: false, pass: true, reason: check.reason, sentence: v.sentence };
}

/** What the placement check said before each rollout the journal ran (its 'ran' row's `placement`), by rollout id. */
export function placementByRollout(
  journal: readonly {
    readonly action: string;
    readonly rolloutId: number | null;
    readonly detail: Readonly<Record<string, unknown>>;
  }[],
): Map<number, { checked: boolean; maxErrorMm?: number | null; maxErrorDeg?: number }> {
  const out = new Map<number, { checked: boolean; maxErrorMm?: number | null; maxErrorDeg?: number }>();
  for (const e of journal) {
    const p = e.detail.placement as Record<string, unknown> | undefined;
    if (e.action !== 'ran' || e.rolloutId === null || !p || typeof p !== 'object') continue;
    out.set(
      e.rolloutId,
      p.checked === true
        ? {
            checked: true,
            maxErrorMm: typeof p.maxErrorMm === 'number' ? p.maxErrorMm : null,
            ...(typeof p.maxErrorDeg === 'number' ? { maxErrorDeg: p.maxErrorDeg } : {}),
          }
        : { checked: false },
    );
  }
  return out;
}
