/**
 * Registry entries for the hardware leaders, for the composition root (src/app) to add:
 *   yam:[slcan:|damiao:]PORT[,PORT]  the YAM leader arm(s) with the teaching handle, one CAN adapter per arm
 *   gello:PORT[,PORT]                GELLO Dynamixel arm(s), one serial line per arm
 * One port drives the left arm. Their emulators register from ./emulators/register.ts, so
 * nothing here builds a stand-in.
 */
import { ARM_SIDES, type ArmSide } from '../../src/rig/contract.js';
import { LeaderSpecError, type LeaderRegistry } from '../../src/rig/leader-registry.js';
import { SerialCanBus } from '../can/serial-can-bus.js';
import { YamLeader } from './yam-leader.js';
import { GelloLeader } from './gello-leader.js';

const WRONG_LEADER_FRAMING =
  'Is it an SLCAN adapter (e.g. CANable with slcan firmware)? For a Damiao USB-CAN adapter write --leader yam:damiao:PORT (in a station config, leader.transport "damiao").';

/** `[slcan:|damiao:]PORT[,PORT]` → the framing named (if any) and each arm's port, left first. */
function portsOf(
  kind: string,
  spec: string,
  argument: string,
): { transport?: 'slcan' | 'damiao'; ports: Partial<Record<ArmSide, string>> } {
  const m = /^(?:(slcan|damiao):)?(.+)$/.exec(argument)!;
  const paths = m[2].split(',').map((p) => p.trim());
  if (paths.length > 2 || paths.some((p) => p === ''))
    throw new LeaderSpecError(
      `--leader ${spec}: give one serial port per arm, left first (at most two), e.g. ${kind}:/dev/ttyACM1,/dev/ttyACM2.`,
    );
  const ports = Object.fromEntries(ARM_SIDES.slice(0, paths.length).map((s, i) => [s, paths[i]]));
  return { ...(m[1] !== undefined ? { transport: m[1] as 'slcan' | 'damiao' } : {}), ports };
}

export function registerLeaderDrivers(registry: LeaderRegistry): LeaderRegistry {
  return registry
    .register({
      kind: 'yam',
      usage: 'yam:PORT[,PORT] (yam:damiao:PORT[,PORT] for Damiao USB-CAN adapters)',
      takesArgument: true,
      create: (argument, spec, { clock }) => {
        const { transport, ports } = portsOf('yam', spec, argument);
        // The follower's CAN transports: SLCAN (CANable) or the Damiao USB-CAN adapter, at their own baud rates.
        const buses = Object.fromEntries(
          Object.entries(ports).map(([s, path]) => [
            s,
            new SerialCanBus({ transport: transport ?? 'slcan', path, wrongFramingHint: WRONG_LEADER_FRAMING }),
          ]),
        );
        return { leader: new YamLeader({ buses, clock }), spec };
      },
    })
    .register({
      kind: 'gello',
      usage: 'gello:PORT[,PORT] (one port per arm, left first)',
      takesArgument: true,
      create: (argument, spec, { clock }) => {
        const { transport, ports } = portsOf('gello', spec, argument);
        if (transport !== undefined)
          throw new LeaderSpecError(
            `--leader ${spec}: a GELLO speaks Dynamixel on its own serial line, not ${transport}; write gello:PORT[,PORT].`,
          );
        return {
          leader: new GelloLeader({
            ports: Object.fromEntries(Object.entries(ports).map(([s, path]) => [s, { path }])),
            clock,
          }),
          spec,
        };
      },
    });
}
