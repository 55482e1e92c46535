/**
 * The operator's takeover as the Session page sees it: while a session rollout runs with a leader
 * configured, whether the operator holds the arms, the stretches driven in this rollout and in the
 * session so far; the toggle itself is the composition root's (the leader's takeover input in the
 * one rollout loop, src/app/session-takeover.ts).
 */
import type { Store } from '../store/store.js';
import type { SessionTakeoverView } from './api-types.js';
import { ApiRefusal } from './request-checks.js';

/** The running rollout's takeover, as the composition root provides it. */
export interface TakeoverControl {
  /** Takes over or gives back on the running rollout's next step; false when no rollout runs. */
  toggle(): boolean;
  /** The running rollout's leader and takeover state, or null between rollouts. */
  now(): { readonly leader: string; readonly driving: boolean; readonly stretches: number } | null;
}

/** The view's takeover while a rollout of session `sessionId` runs with a leader, else null. */
export function takeoverView(
  store: Store,
  sessionId: number,
  control: TakeoverControl | undefined,
): SessionTakeoverView | null {
  const now = control?.now();
  if (!now) return null;
  // The rollout running now is not stored yet: its stretches are the live count.
  let stored = 0;
  for (const r of store.listRollouts({ sessionId })) stored += store.listTakeovers(r.id).length;
  return { ...now, sessionStretches: stored + now.stretches };
}

/** The operator's toggle from the page: refused in one sentence when there is nothing to take over. */
export function toggleTakeover(control: TakeoverControl | undefined, running: boolean): void {
  if (!control)
    throw new ApiRefusal(
      409,
      "This station has no leader arm to take over with: name one in the station config ('leader', docs/station-config.md) and restart the station.",
    );
  if (!running || !control.toggle())
    throw new ApiRefusal(409, 'No session rollout is running: the operator takes over while the policy runs.');
}
