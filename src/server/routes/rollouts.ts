/** Rollouts: the store's list and one rollout, an operator's score of a rig rollout, and running or stopping a single one. */
import { RolloutScoreRefusal, scoreStoredRollout } from '../../session/rollout-score.js';
import { ApiRefusal } from '../request-checks.js';
import { parseEmptyBody, parseId, parseRolloutScore, parseRunRollout } from '../request-bodies.js';
import { rolloutDetail, rolloutSummary } from '../store-views.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

const rolloutId = ([id]: readonly string[]): number => parseId(id, 'rollout');

export function rolloutRoutes(s: StationContext): Route[] {
  const { store, views } = s;
  return [
    route({
      method: 'GET',
      path: '/api/rollouts',
      handle: ({ url }) => {
        const limit = url.searchParams.has('limit') ? parseId(url.searchParams.get('limit') ?? '', 'limit') : 200;
        const labels = s.blind.labels();
        return {
          body: store
            .listRollouts()
            .reverse()
            .slice(0, limit)
            .map((r) => s.blind.blinded(rolloutSummary(r, views), labels)),
        };
      },
    }),
    route({
      method: 'GET',
      path: /^\/api\/rollouts\/([^/]+)$/,
      params: rolloutId,
      handle: ({ params: id }) => {
        const r = store.getRollout(id);
        if (!r) throw new ApiRefusal(404, `There is no rollout ${id} in the store.`);
        return { body: s.blind.blinded(rolloutDetail(r, views), s.blind.labels()) };
      },
    }),
    route({
      method: 'POST',
      path: /^\/api\/rollouts\/([^/]+)\/score$/,
      params: rolloutId,
      body: parseRolloutScore,
      handle: ({ params: id, body }) => {
        try {
          return { status: 201, body: scoreStoredRollout(store, { rolloutId: id, ...body }) };
        } catch (e) {
          if (e instanceof RolloutScoreRefusal)
            throw new ApiRefusal(e.message.startsWith('There is no rollout') ? 404 : 409, e.message);
          throw e;
        }
      },
    }),
    route({ method: 'GET', path: '/api/run', handle: () => ({ body: s.singleRollouts.current() }) }),
    route({
      method: 'POST',
      path: '/api/rollouts/run',
      body: parseRunRollout,
      handle: async ({ body }) => ({ status: 202, body: await s.singleRollouts.start(body) }),
    }),
    route({
      method: 'POST',
      path: '/api/rollouts/stop',
      body: (json) => parseEmptyBody(json, 'A stop request'),
      handle: () => {
        if (s.sessions?.stopRollout()) return { status: 202, body: s.singleRollouts.current() };
        return { body: s.singleRollouts.stop() };
      },
    }),
  ];
}
