/** The rig's states in an operator's words. */
import type { RigMode } from '../src/rig/contract.js';
import type { RigStatus } from '../src/server/api-types.js';

export const MODE_WORDS: Record<RigMode, string> = {
  unconfigured: 'NOT CONNECTED',
  configured: 'READY · OFF',
  active: 'ACTIVE',
  holding: 'HOLDING',
  damped: 'DAMPED · OFF',
  estopped: 'E-STOPPED',
  fault: 'FAULT',
};

/** What the rig is doing, in one line under the mode. */
export function useWords(rig: RigStatus): string {
  if (rig.use === 'rollout') return 'a rollout has the rig';
  if (rig.use === 'changing') return 'setting the rig up…';
  if (rig.use === 'holding') return rig.mode === 'estopped' ? 'stopped by E-stop, motors damped' : 'holding its pose (press D to damp)';
  return rig.mode === 'configured' || rig.mode === 'damped' ? 'motors off (press H to hold)' : '';
}
