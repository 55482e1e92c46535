/**
 * What the station tells the factory side and shows on its tower light: a small state object
 * the composition root updates (session, rollout phase, rig status, faults) and the station's
 * OPC UA server and the tower light follow. Listeners hear every change, synchronously.
 */

export interface StationState {
  /** The eval session in progress, or '' between sessions. */
  readonly sessionId: string;
  /** 'idle' | 'placing' | 'running' | 'scoring' | 'resetting' | 'paused' | … (the session engine's words). */
  readonly rolloutPhase: string;
  /** The rig's mode (RigMode: 'active', 'holding', 'damped', 'estopped', 'fault', …). */
  readonly rigStatus: string;
  /** Current faults and safety stops, one operator sentence each. */
  readonly faults: readonly string[];
}

export const INITIAL_STATION_STATE: StationState = {
  sessionId: '',
  rolloutPhase: 'idle',
  rigStatus: 'unconfigured',
  faults: [],
};

export class StationStateBoard {
  private value: StationState;
  private readonly listeners = new Set<(s: StationState) => void>();

  constructor(initial: StationState = INITIAL_STATION_STATE) {
    this.value = initial;
  }

  get state(): StationState {
    return this.value;
  }

  /**
   * A rollout ended: idle with the rig's mode, except that a safety stop stays red, with its
   * reason, until someone looks — never a green flash between the stop and the red.
   */
  rolloutEnded(rigMode: string, episode?: { readonly outcome: string; readonly reason?: string }): void {
    if (episode?.outcome === 'safety-stop')
      this.update({ rolloutPhase: 'idle', rigStatus: 'estopped', faults: [episode.reason ?? 'safety stop'] });
    else this.update({ rolloutPhase: 'idle', rigStatus: rigMode });
  }

  update(change: Partial<StationState>): void {
    const next = { ...this.value, ...change };
    if (
      next.sessionId === this.value.sessionId &&
      next.rolloutPhase === this.value.rolloutPhase &&
      next.rigStatus === this.value.rigStatus &&
      sameList(next.faults, this.value.faults)
    )
      return;
    this.value = next;
    for (const l of this.listeners) l(next);
  }

  onChange(listener: (s: StationState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
