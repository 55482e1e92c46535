/**
 * The station's rig registry: every rig type this build knows, chosen by config `type`.
 * The composition root is the one place that names drivers; nothing else branches on hardware.
 */
import { RigRegistry, registerMirrorRig } from '../rig/registry.js';
import { registerYamCanRigs } from '../../drivers/yam/register.js';

/** The embedded default: YamCanRig on the byte-level emulator in this process, no hardware. */
export const DEFAULT_RIG_CONFIG = { type: 'yam-emulated', transport: 'slcan' } as const;

export function stationRigRegistry(): RigRegistry {
  return registerYamCanRigs(registerMirrorRig(new RigRegistry()));
}
