/** The projector: what it shows and the frame on the table now (the /projector page shows it). */
import { PROJECTOR_FRAME_PATH } from '../api-types.js';
import type { ProjectorFeed } from '../projector-feed.js';
import { route, type Route } from './route-table.js';

export function projectorRoutes(projector: ProjectorFeed): Route[] {
  return [
    route({ method: 'GET', path: '/api/projector', handle: () => ({ body: projector.state() }) }),
    route({
      method: 'GET',
      path: PROJECTOR_FRAME_PATH,
      handle: () => ({ body: projector.frame(), type: 'image/png' }),
    }),
  ];
}
