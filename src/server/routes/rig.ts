/** The rig: its status, Hold / Damp / E-stop, its URDF for the 3D view, and the sim twin's drift against it. */
import { rigToUrdf } from '../../rig/urdf.js';
import { ApiRefusal } from '../request-checks.js';
import { parseRigCommand } from '../request-bodies.js';
import { RigBusyError } from '../rig-host.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

export function rigRoutes(s: StationContext): Route[] {
  return [
    route({ method: 'GET', path: '/api/rig', handle: () => ({ body: s.rig.status() }) }),
    route({
      method: 'POST',
      path: '/api/rig/command',
      body: parseRigCommand,
      handle: async ({ body: { command } }) => {
        if (command === 'estop') {
          s.rig.estop('the operator pressed E-stop in the station UI');
          s.sessions?.estop();
        } else {
          // A session owns the arms between its rollouts too (the operator places around them): hold
          // and damp there would move or drop them under the session's feet. E-stop always acts.
          if (s.sessions?.working())
            throw new RigBusyError(
              `An eval session has the arms; ${command === 'hold' ? 'Hold' : 'Damp'} is not available until it is stopped for now (Q). Use Abort (S) to stop a rollout, or E-stop (Esc).`,
            );
          if (command === 'hold') await s.rig.hold();
          else await s.rig.damp();
        }
        return { body: s.rig.status() };
      },
    }),
    route({
      method: 'GET',
      path: '/api/rig/sim-drift',
      handle: async () => {
        // A blind session still running keeps its policies' results to itself, as compare does.
        const blind = s.blind.specs();
        const excludePolicyIds = s.store
          .listPolicies()
          .filter((p) => blind.has(p.spec))
          .map((p) => p.id);
        return { body: await s.reports.drift({ ...(s.simDrift ? { thresholds: s.simDrift } : {}), excludePolicyIds }) };
      },
    }),
    route({
      method: 'GET',
      path: '/api/rig/urdf',
      handle: () => {
        const model = s.rig.model();
        if (!model)
          throw new ApiRefusal(
            409,
            'The rig is not set up yet, so its model is not known; press Hold, or wait for it to come up.',
          );
        return { body: rigToUrdf(model), type: 'application/xml; charset=utf-8' };
      },
    }),
  ];
}
