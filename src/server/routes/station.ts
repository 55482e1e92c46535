/** GET /api/info and GET /api/calibrations: what the station is and which calibrations it runs with. */
import type { CalibrationsView } from '../api-types.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

export function stationRoutes(s: StationContext): Route[] {
  return [
    route({ method: 'GET', path: '/api/info', handle: () => ({ body: s.info() }) }),
    route({
      method: 'GET',
      path: '/api/calibrations',
      handle: () => ({
        body: { inUse: s.calibrationsInUse?.() ?? [], stored: s.store.calibrationKinds() } satisfies CalibrationsView,
      }),
    }),
  ];
}
