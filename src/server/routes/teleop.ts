/** The teleop recording on the station's rig: start, resume, its keys, and what '--resume' would carry on. */
import { parseResumeTeleop, parseStartTeleop, parseTeleopControl } from '../request-bodies.js';
import type { TeleopHost } from '../teleop-host.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

export function teleopRoutes(s: StationContext, teleop: TeleopHost): Route[] {
  return [
    route({ method: 'GET', path: '/api/teleop', handle: () => ({ body: teleop.view() }) }),
    route({
      method: 'POST',
      path: '/api/teleop/start',
      body: parseStartTeleop,
      handle: async ({ body }) => {
        s.refuseIfRigBusy('starting a teleop recording');
        return { status: 201, body: await teleop.start(body) };
      },
    }),
    route({ method: 'GET', path: '/api/teleop/resumable', handle: () => ({ body: teleop.resumable() }) }),
    route({
      method: 'POST',
      path: '/api/teleop/resume',
      body: parseResumeTeleop,
      handle: async ({ body }) => {
        s.refuseIfRigBusy('resuming a teleop recording');
        return { status: 201, body: await teleop.resume(body) };
      },
    }),
    route({
      method: 'POST',
      path: '/api/teleop/control',
      body: parseTeleopControl,
      handle: ({ body }) => ({ body: teleop.control(body) }),
    }),
  ];
}
