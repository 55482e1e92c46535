/**
 * Placement as a covariate of real results: each session rollout carries what the placement check
 * measured before it started (its worst object's error, or that it ran unchecked). Per policy the
 * report says how many were checked and how far off they were, and whether the error went with
 * progress (Pearson r of the worst error against progress over the checked rollouts) — a policy
 * that only succeeds on well-placed tables shows it here. Pure.
 */

export interface RolloutPlacement {
  readonly checked: boolean;
  /** The worst object's distance from its outline, mm (checked rollouts). */
  readonly maxErrorMm?: number | null;
  readonly maxErrorDeg?: number;
}

export interface PlacementCovariate {
  /** Real rollouts with a check result (the rest ran outside a session, or before the check existed). */
  readonly rollouts: number;
  readonly checked: number;
  readonly unchecked: number;
  readonly meanMaxErrorMm: number | null;
  readonly worstMaxErrorMm: number | null;
  /** Pearson r of the worst error (mm) against progress over the checked, scored rollouts; null below 3 or without spread. */
  readonly errorProgressR: number | null;
  readonly sentence: string;
}

function pearsonR(xs: readonly number[], ys: readonly number[]): number | null {
  const n = xs.length;
  if (n < 3) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i] - mx) * (ys[i] - my);
    sxx += (xs[i] - mx) ** 2;
    syy += (ys[i] - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}

/** The covariate over real rollouts (progress null: not scored); null when none carries a check result. */
export function placementCovariate(
  rows: readonly { readonly progress: number | null; readonly placement?: RolloutPlacement | null }[],
): PlacementCovariate | null {
  const withCheck = rows.filter((r) => r.placement);
  if (withCheck.length === 0) return null;
  const checked = withCheck.filter((r) => r.placement!.checked && typeof r.placement!.maxErrorMm === 'number');
  const errs = checked.map((r) => r.placement!.maxErrorMm as number);
  const scored = checked.filter((r) => r.progress !== null);
  const r = pearsonR(
    scored.map((x) => x.placement!.maxErrorMm as number),
    scored.map((x) => x.progress!),
  );
  const mean = errs.length ? errs.reduce((a, b) => a + b, 0) / errs.length : null;
  const worst = errs.length ? Math.max(...errs) : null;
  const unchecked = withCheck.length - checked.length;
  const sentence =
    `placement checked before ${checked.length} of ${withCheck.length} rollouts${unchecked ? ` (${unchecked} unchecked)` : ''}` +
    (mean !== null ? `; worst object ${mean.toFixed(1)} mm off on average, ${worst!.toFixed(1)} mm at most` : '') +
    (r !== null ? `; r(error, progress) ${r.toFixed(2)} over ${scored.length}` : '');
  return {
    rollouts: withCheck.length,
    checked: checked.length,
    unchecked,
    meanMaxErrorMm: mean,
    worstMaxErrorMm: worst,
    errorProgressR: r,
    sentence,
  };
}
