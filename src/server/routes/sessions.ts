/** Eval sessions: the store's list, starting, resuming and ending one, its results, and the operator's answers. */
import {
  parseEndSession,
  parseId,
  parseResumeSession,
  parseSessionAnswer,
  parseStartSession,
} from '../request-bodies.js';
import type { SessionHost } from '../session-host.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

const sessionId = ([id]: readonly string[]): number => parseId(id, 'session');

export function sessionRoutes(s: StationContext, sessions: SessionHost): Route[] {
  return [
    route({
      method: 'GET',
      path: /^\/api\/sessions\/([^/]+)\/results$/,
      params: sessionId,
      handle: ({ params }) => ({ body: sessions.results(params) }),
    }),
    route({ method: 'GET', path: '/api/sessions', handle: () => ({ body: sessions.list() }) }),
    route({ method: 'GET', path: '/api/session', handle: () => ({ body: sessions.view() }) }),
    route({
      method: 'POST',
      path: '/api/sessions',
      body: parseStartSession,
      handle: async ({ body }) => {
        s.refuseIfRigBusy('starting a session');
        return { status: 201, body: await sessions.start(body) };
      },
    }),
    route({
      method: 'POST',
      path: /^\/api\/sessions\/([^/]+)\/resume$/,
      params: sessionId,
      body: parseResumeSession,
      handle: async ({ params, body: { requestId } }) => {
        s.refuseIfRigBusy('resuming a session');
        return { body: await sessions.resume(params, undefined, requestId) };
      },
    }),
    route({
      method: 'POST',
      path: /^\/api\/sessions\/([^/]+)\/end$/,
      params: sessionId,
      body: parseEndSession,
      handle: ({ params, body }) => ({ body: sessions.end(params, body.reason) }),
    }),
    route({
      method: 'POST',
      path: '/api/session/answer',
      body: parseSessionAnswer,
      handle: async ({ body }) => ({ body: { session: await sessions.answer(body) } }),
    }),
    route({
      method: 'POST',
      path: '/api/session/takeover',
      handle: () => ({ body: sessions.toggleTakeover() }),
    }),
  ];
}
