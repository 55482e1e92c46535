/**
 * The tower light from the station's state, as cell lights are read across a lab: green — idle,
 * safe to walk up; amber — the arms may move (a rollout runs); red — stopped on a fault, an open
 * interlock or an e-stop. One lamp at a time, so its position on the tower says it too (colour is
 * never the only cue).
 */
import type { StationState } from './station-state.js';

export interface TowerLight {
  readonly red: boolean;
  readonly amber: boolean;
  readonly green: boolean;
}

export const TOWER_IDLE: TowerLight = { red: false, amber: false, green: true };
export const TOWER_RUNNING: TowerLight = { red: false, amber: true, green: false };
export const TOWER_STOPPED: TowerLight = { red: true, amber: false, green: false };

/** Modes of the rig that mean "stopped by safety" whatever the rollout phase says. */
const STOPPED_MODES = new Set(['estopped', 'fault']);

export function towerLightFor(state: StationState): TowerLight {
  if (state.faults.length > 0 || STOPPED_MODES.has(state.rigStatus)) return TOWER_STOPPED;
  if (state.rolloutPhase === 'running') return TOWER_RUNNING;
  return TOWER_IDLE;
}

export function sameLight(a: TowerLight, b: TowerLight): boolean {
  return a.red === b.red && a.amber === b.amber && a.green === b.green;
}
