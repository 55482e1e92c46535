/**
 * Registry entries for the emulated leaders, for the composition root (src/app) to add — here, beside
 * the emulators, so the hardware leaders' registrations (../register.ts) never build a stand-in:
 *   emulated-yam    the YAM leader pair with teaching handles, on byte-level CAN emulators
 *   emulated-gello  the GELLO pair, on byte-level Dynamixel emulators
 * Both move by the context's hand (scripted, or a replayed trajectory).
 */
import type { LeaderRegistry } from '../../../src/rig/leader-registry.js';
import { createEmulatedYamLeader } from './yam-leader-emulator.js';
import { createEmulatedGello } from './gello-emulator.js';

export function registerEmulatedLeaders(registry: LeaderRegistry): LeaderRegistry {
  return registry
    .register({
      kind: 'emulated-yam',
      usage: 'emulated-yam',
      takesArgument: false,
      create: (_argument, spec, { clock, hand }) => {
        const emulated = createEmulatedYamLeader({ clock, hand });
        return { leader: emulated.leader, spec, emulated };
      },
    })
    .register({
      kind: 'emulated-gello',
      usage: 'emulated-gello',
      takesArgument: false,
      create: (_argument, spec, { clock, hand }) => {
        const emulated = createEmulatedGello({ clock, hand });
        return { leader: emulated.leader, spec, emulated };
      },
    });
}
