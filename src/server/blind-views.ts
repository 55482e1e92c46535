/**
 * What a blind eval session still running keeps to itself: its rollouts show their label, never
 * their policy, and its policies are left out of Compare and the sim-drift view until it ends.
 */
import { ApiRefusal } from './request-checks.js';
import type { SessionHost } from './session-host.js';
import type { ViewContext } from './store-views.js';

export class BlindViews {
  constructor(
    private readonly sessions: SessionHost | undefined,
    private readonly views: ViewContext,
  ) {}

  /** The policy specs of blind sessions not yet ended, each with its session's id. */
  specs(): Map<string, number> {
    return this.sessions?.blindSpecs() ?? new Map<string, number>();
  }

  /** Each rollout of a blind session not yet ended, with the label it shows. */
  labels(): Map<number, string> {
    return this.sessions?.blindLabels() ?? new Map<number, string>();
  }

  /**
   * Compare leaves the rollouts of blind sessions still running out of its picker's counts and
   * refuses to compare those sessions' policies until they end: a count or a progress per policy
   * (even an empty one) would say which label is which.
   */
  refuseIfBlind(policy: string): void {
    const spec = /^\d+$/.test(policy) ? this.views.policy(Number(policy))?.spec : policy;
    const session = spec === undefined ? undefined : this.specs().get(spec);
    if (session !== undefined)
      throw new ApiRefusal(
        409,
        `Policy ${policy} runs in blind session ${session}, which has not ended: comparing it now would show which label it is. Compare it once the session ends.`,
      );
  }

  /** A rollout of a blind session that has not ended shows its label, never its policy. */
  blinded<T extends { id: number; policy: { id: number; name: string; spec: string } }>(
    r: T,
    labels: ReadonlyMap<number, string>,
  ): T {
    const label = labels.get(r.id);
    if (label === undefined) return r;
    // Every word that names it (a reason, a policy error, an episode file's name) says the label instead.
    let text = JSON.stringify({ ...r, policy: { id: 0, name: label, spec: '' } });
    for (const word of [r.policy.spec, r.policy.name].filter((w) => w.length > 0).sort((a, b) => b.length - a.length)) {
      text = text.split(JSON.stringify(word).slice(1, -1)).join(label);
    }
    return JSON.parse(text) as T;
  }
}
