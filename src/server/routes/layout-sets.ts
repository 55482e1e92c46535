/** Layout sets: the store's list, drawing a new one, one layout (the 3D view) and its top view (the session's rollout card). */
import { sampleLayoutSet, type LayoutSet } from '../../layouts/layout-set.js';
import { LayoutSetError } from '../../layouts/errors.js';
import { layoutTopViewSvg } from '../../layouts/top-view.js';
import type { LayoutView } from '../api-types.js';
import { ApiRefusal } from '../request-checks.js';
import { parseId, parseLayoutSetSha, parseSampleLayoutSet } from '../request-bodies.js';
import { layoutSetSummary } from '../store-views.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

/** The layout set and layout index a path names (…/layout-sets/SHA/layouts/N…). */
function layoutParams([sha, index]: readonly string[]): { sha: string; index: number } {
  return { sha: parseLayoutSetSha(sha), index: index === '0' ? 0 : parseId(index, 'layout index') };
}

/** The stored layout set, refused (404) when the store does not hold it or it has no such layout. */
function storedLayout(
  s: StationContext,
  { sha, index }: { sha: string; index: number },
): { set: LayoutSet; layout: LayoutSet['layouts'][number] } {
  const set = s.store.loadLayoutSet(sha);
  if (!set) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
  const layout = set.layouts.find((l) => l.index === index);
  if (!layout)
    throw new ApiRefusal(
      404,
      `Layout set ${sha.slice(0, 12)}… has layouts 0 to ${set.layouts.length - 1}, not ${index}.`,
    );
  return { set, layout };
}

export function layoutSetRoutes(s: StationContext): Route[] {
  return [
    route({
      method: 'GET',
      path: '/api/layout-sets',
      handle: () => ({
        body: s.store.listLayoutSets().map((r) => layoutSetSummary(r, s.views.episodeSecondsOf(r.task))),
      }),
    }),
    route({
      method: 'POST',
      path: '/api/layout-sets/sample',
      body: parseSampleLayoutSet,
      handle: ({ body: r }) => {
        let set;
        try {
          set = sampleLayoutSet({ task: r.task, tiers: [...r.tiers], perTier: r.perTier, seed: r.seed });
        } catch (e) {
          if (e instanceof LayoutSetError || e instanceof RangeError) throw new ApiRefusal(400, e.message);
          throw e;
        }
        const { record } = s.store.putLayoutSet(set);
        return { status: 201, body: layoutSetSummary(record, s.views.episodeSecondsOf(record.task)) };
      },
    }),
    route({
      method: 'GET',
      path: /^\/api\/layout-sets\/([^/]+)\/layouts\/([^/]+)$/,
      params: layoutParams,
      handle: ({ params }) => {
        const { set, layout } = storedLayout(s, params);
        return { body: { layoutSet: params.sha, task: set.task, layout } satisfies LayoutView };
      },
    }),
    route({
      method: 'GET',
      path: /^\/api\/layout-sets\/([^/]+)\/layouts\/([^/]+)\/top-view\.svg$/,
      params: layoutParams,
      handle: ({ params }) => {
        const { set } = storedLayout(s, params);
        return { body: layoutTopViewSvg(set, params.index, 900), type: 'image/svg+xml; charset=utf-8' };
      },
    }),
  ];
}
