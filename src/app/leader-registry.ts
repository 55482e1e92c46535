/**
 * The station's leader registry: every leader kind this build knows, chosen by its `--leader`
 * spelling (or a station config's `leader`, through leaderSpecOf). Like rig-registry.ts, the one
 * place that names leader drivers.
 */
import type { Clock } from '../rig/contract.js';
import { LeaderRegistry, LeaderSpecError, type LeaderHand, type LeaderSetup } from '../rig/leader-registry.js';
import { registerLeaderDrivers } from '../../drivers/leaders/register.js';
import { registerEmulatedLeaders } from '../../drivers/leaders/emulators/register.js';
import { UserError } from './command.js';

export type { LeaderSetup } from '../rig/leader-registry.js';

export function stationLeaderRegistry(): LeaderRegistry {
  return registerLeaderDrivers(registerEmulatedLeaders(new LeaderRegistry()));
}

/** --leader emulated-yam | emulated-gello | yam:[slcan:|damiao:]PORT[,PORT] | gello:PORT[,PORT] (one port: the left arm). */
export function createLeader(spec: string, clock: Clock, hand?: LeaderHand): LeaderSetup {
  try {
    return stationLeaderRegistry().create(spec, { clock, ...(hand ? { hand } : {}) });
  } catch (e) {
    if (e instanceof LeaderSpecError) throw new UserError(e.message);
    throw e;
  }
}
