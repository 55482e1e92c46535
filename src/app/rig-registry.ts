/**
 * The station's rig registry: every rig type this build knows, chosen by config `type`.
 * The composition root is the one place that names drivers; nothing else branches on hardware.
 */
import { RigRegistry, registerMirrorRig } from '../rig/registry.js';
import { registerYamCanRigs } from '../../drivers/yam/register.js';
import { registerEmulatedRigs } from '../emulated-cell/register.js';

export { clockForRigConfig } from '../emulated-cell/register.js';

/** The embedded default: YamCanRig on the emulated cell (arms, objects, a reality gap) in this process, no hardware. */
export const DEFAULT_RIG_CONFIG = { type: 'yam-cell', transport: 'slcan' } as const;

export function stationRigRegistry(): RigRegistry {
  return registerEmulatedRigs(registerYamCanRigs(registerMirrorRig(new RigRegistry())));
}
