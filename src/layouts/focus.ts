/**
 * A layout focus: which layouts of a tier a guided sample keeps — at least so many objects that
 * start crowded (another object's centre within a radius) or lying. The seeded sampler draws
 * ordinary tier layouts and keeps those that pass, so a focused layout is still one its tier allows.
 */
import type { Layout } from '../tasks/types.js';

export interface LayoutFocusRule {
  readonly minCrowdedObjects?: number;
  readonly crowdedRadiusM?: number;
  readonly minLyingObjects?: number;
}

/** The default crowding radius (the failure diagnosis's). */
export const DEFAULT_CROWDED_RADIUS_M = 0.15;
/** Draws per layout before a focus is declared out of the tier's reach. */
export const FOCUS_DRAWS = 400;

/** How many objects start with another object's centre within radiusM. */
export function crowdedObjects(layout: Layout, radiusM = DEFAULT_CROWDED_RADIUS_M): number {
  return layout.objects.filter((o) =>
    layout.objects.some((q) => q !== o && Math.hypot(q.pose.x - o.pose.x, q.pose.y - o.pose.y) < radiusM),
  ).length;
}

export function lyingObjects(layout: Layout): number {
  return layout.objects.filter((o) => o.posture === 'lying').length;
}

export function focusAccepts(rule: LayoutFocusRule, layout: Layout): boolean {
  return (
    crowdedObjects(layout, rule.crowdedRadiusM) >= (rule.minCrowdedObjects ?? 0) &&
    lyingObjects(layout) >= (rule.minLyingObjects ?? 0)
  );
}

/** The rule in words, for refusals. */
export function focusWords(rule: LayoutFocusRule): string {
  const parts = [
    rule.minCrowdedObjects
      ? `at least ${rule.minCrowdedObjects} objects within ${Math.round((rule.crowdedRadiusM ?? DEFAULT_CROWDED_RADIUS_M) * 100)} cm of another`
      : '',
    rule.minLyingObjects ? `at least ${rule.minLyingObjects} lying` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' and ') : 'any layout';
}
