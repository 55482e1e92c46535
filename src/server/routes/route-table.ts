/**
 * The station API's one route table: each route is a method, a path (exact, or a pattern whose
 * groups are its parameters), how its parameters and JSON body are read, and its handler. A 404
 * (nothing at that path) and a 405 (something there, not for that method) follow from the table,
 * so no list of paths is kept by hand beside it.
 */
import type { IncomingMessage } from 'node:http';
import { ApiRefusal, readJsonBody } from '../request-checks.js';

/** What a handler answers: JSON unless `body` is a Buffer or a string (then sent as it is, with `type`). */
export interface Reply {
  readonly status?: number;
  readonly body: unknown;
  readonly type?: string;
}

export interface RouteRequest<P, B> {
  readonly url: URL;
  readonly req: IncomingMessage;
  readonly params: P;
  readonly body: B;
}

export interface Route<P = unknown, B = unknown> {
  readonly method: 'GET' | 'POST';
  /** An exact path, or a pattern whose groups are the path's parameters. An exact path wins over a pattern that also matches it. */
  readonly path: string | RegExp;
  /** Refuses (404) a path the pattern matches that names nothing, before the method is looked at. */
  readonly names?: (groups: readonly string[]) => void;
  /** The path's parameters from the pattern's groups; a bad one is refused (400) before the body is read. */
  readonly params?: (groups: readonly string[]) => P;
  /** Reads the JSON body and checks it; a route without one reads the request itself, if at all. */
  readonly body?: (json: unknown) => B;
  /** Ends the 405 sentence of a wrong method on this path: how to use it instead. */
  readonly howToUse?: string;
  handle(request: RouteRequest<P, B>): Reply | Promise<Reply>;
}

/** Declares one route, its parameters' and body's types inferred from its parsers. */
export function route<P = undefined, B = undefined>(r: Route<P, B>): Route {
  return r as Route;
}

export class RouteTable {
  private readonly exact = new Map<string, Route[]>();
  private readonly patterns: Route[] = [];

  constructor(routes: readonly Route[]) {
    for (const r of routes) {
      if (typeof r.path !== 'string') this.patterns.push(r);
      else this.exact.set(r.path, [...(this.exact.get(r.path) ?? []), r]);
    }
  }

  /** Answers `method` on the URL's path, or throws the ApiRefusal that says why not. */
  async dispatch(method: string, url: URL, req: IncomingMessage): Promise<Reply> {
    const path = url.pathname;
    const found = this.matching(path);
    if (found.length === 0) throw new ApiRefusal(404, `There is nothing at ${path}.`);
    for (const { route: r, groups } of found) r.names?.(groups);
    const hit = found.find((f) => f.route.method === method);
    if (!hit) {
      const how = found.find((f) => f.route.howToUse !== undefined)?.route.howToUse;
      throw new ApiRefusal(405, `${method} is not allowed on ${path}${how === undefined ? '' : `; ${how}`}.`);
    }
    const params = hit.route.params?.(hit.groups);
    const body = hit.route.body ? hit.route.body(await readJsonBody(req)) : undefined;
    return hit.route.handle({ url, req, params, body });
  }

  private matching(path: string): { route: Route; groups: readonly string[] }[] {
    const exact = this.exact.get(path);
    if (exact) return exact.map((r) => ({ route: r, groups: [] }));
    const found: { route: Route; groups: readonly string[] }[] = [];
    for (const r of this.patterns) {
      const m = (r.path as RegExp).exec(path);
      if (m) found.push({ route: r, groups: m.slice(1) });
    }
    return found;
  }
}
