/**
 * Training data from the sim: which rollout each attempt runs, whether its episode is kept, and
 * when to stop. Pure, so a resumed run makes the same attempts in the same order: attempt a runs
 * layout a mod L with seed ⌊a / L⌋ (a new placement draw each pass over the set), and the
 * episodes kept are the first N attempts that pass, whatever was interrupted in between.
 */
export interface GenerationAttempt {
  readonly attempt: number;
  readonly layoutIndex: number;
  readonly seed: number;
}

export function attemptAt(attempt: number, layoutCount: number): GenerationAttempt {
  return { attempt, layoutIndex: attempt % layoutCount, seed: Math.floor(attempt / layoutCount) };
}

export interface KeepRule {
  /** Keep only episodes that did the whole task (progress 1). */
  readonly successOnly: boolean;
  /** Keep only episodes with at least this progress (0 keeps every valid one). */
  readonly minProgress: number;
}

export interface EpisodeVerdict {
  readonly kept: boolean;
  /** Why it was rejected, in words (undefined when kept). */
  readonly reason?: string;
}

/** Kept or rejected with a reason, from the rollout's status, error and progress. */
export function judgeEpisode(
  e: { readonly status: string; readonly reason?: string; readonly error?: string; readonly progress?: number },
  rule: KeepRule,
): EpisodeVerdict {
  if (e.status !== 'valid') return { kept: false, reason: `${e.status}: ${e.reason ?? 'no reason given'}` };
  if (e.error) return { kept: false, reason: `policy error: ${e.error}` };
  const p = e.progress ?? 0;
  if (rule.successOnly && p < 1) return { kept: false, reason: `not a success (progress ${p.toFixed(2)})` };
  if (p < rule.minProgress) return { kept: false, reason: `progress ${p.toFixed(2)} below ${rule.minProgress}` };
  return { kept: true };
}

/** Attempts a run may make for N kept episodes before it stops and says the policy rarely passes. */
export function attemptBound(episodes: number, maxAttempts: number | undefined): number {
  return maxAttempts ?? Math.max(10, 4 * episodes);
}
