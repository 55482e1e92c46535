/** The cell PLC's interlocks as the session engine's gate (`tandem session run` and the station's sessions). */
import { NO_GATE, type SessionGate } from '../session/ports.js';

/**
 * The session's view of the cell's interlocks: a rollout is not started while one is open. The
 * stop itself happens in the rig's safety supervisor, which reads the same source every cycle,
 * so the engine's signal never has to race it.
 */
export function sessionInterlocks(plc: { current(): { open: boolean; reason?: string } }): SessionGate {
  return {
    armed: NO_GATE.armed,
    blocked: () => {
      const c = plc.current();
      return c.open ? (c.reason ?? 'an interlock of the cell is open') : undefined;
    },
  };
}
