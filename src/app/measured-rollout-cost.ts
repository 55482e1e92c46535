/**
 * How long a rollout takes a station, measured in its store: the operator's place, score and reset
 * seconds from earlier sessions' journals, and the rig's time around each episode from its rig
 * rollouts — what a session plan is fitted to (the defaults until there are three of each).
 */
import { type Store } from '../store/store.js';
import { DEFAULT_ROLLOUT_COST_S, type RolloutCostS } from '../session/plan.js';
import { JOURNAL } from '../session/journal-state.js';

/** Per-rollout times measured in this store (earlier sessions' journals and rig rollouts), where there are enough. */
export function measuredCost(store: Store): { cost: RolloutCostS; source: 'measured' | 'defaults' } {
  const mean = (xs: number[]): number | undefined =>
    xs.length >= 3 ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined;
  const journal = store.listSessions().flatMap((s) => store.listSessionJournal(s.id));
  const op = (action: string) =>
    mean(journal.filter((e) => e.action === action && e.operatorS !== null).map((e) => e.operatorS!));
  // A rig rollout's stored duration is its episode plus the hold and damp after it.
  const rig = mean(
    store
      .listRollouts({ kind: 'real' })
      .filter((r) => r.durationS !== null)
      .map((r) => Math.max(0, r.durationS! - r.episodeSeconds)),
  );
  const placeS = op(JOURNAL.placed);
  const scoreS = op(JOURNAL.scored);
  const resetS = op(JOURNAL.reset);
  if (placeS === undefined || scoreS === undefined || resetS === undefined)
    return { cost: DEFAULT_ROLLOUT_COST_S, source: 'defaults' };
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  return {
    cost: { placeS: r1(placeS), rigS: r1(rig ?? DEFAULT_ROLLOUT_COST_S.rigS), scoreS: r1(scoreS), resetS: r1(resetS) },
    source: 'measured',
  };
}
