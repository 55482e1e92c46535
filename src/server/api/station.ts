/**
 * The station itself: the launch token and how requests carry it, the request size limit, the error
 * shape every refusal has, and what the station says about itself. Pure (no Node built-ins): the
 * server and the operator UI share it; src/server/api-types.ts gathers every feature.
 */
import type { ReportChoices } from '../../analysis/paired-report.js';
import type { TeleopChoices } from './teleop.js';

/**
 * Every API request carries the launch token in this header. The page reads it from the URL's
 * fragment (`#token=…`, never sent to a server) and keeps it in memory — never in a cookie, which
 * any other server on 127.0.0.1 would receive (cookies are not isolated by port).
 */
export const TOKEN_HEADER = 'x-tandem-token';

/** The event stream's WebSocket subprotocol; the server answers with it. */
export const EVENTS_PROTOCOL = 'tandem-events';

/** A browser cannot set headers on a WebSocket: it offers the token as a second subprotocol with this prefix. */
export const TOKEN_PROTOCOL_PREFIX = 'tandem-token.';

/** The launch token in a fragment (`#token=…`, or a view before it: `#rig&token=…`), or undefined. */
export function tokenInFragment(hash: string): string | undefined {
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (part.startsWith('token=') && /^[A-Za-z0-9_-]+$/.test(part.slice(6))) return part.slice(6);
  }
  return undefined;
}

/** Largest request body the API reads; anything bigger is refused before it is parsed. */
export const MAX_BODY_BYTES = 16 * 1024;

/** The WebSocket path of the event stream. */
export const EVENTS_PATH = '/api/events';

/** Every error response: one sentence an operator can act on. */
export interface ApiError {
  readonly error: string;
  /** When a request mixes what cannot be mixed (the compare report's calibrations or episode lengths), what is stored to pick from. */
  readonly choices?: ReportChoices;
}

export interface StationInfo {
  readonly rigType: string;
  readonly dataDir: string;
  readonly startedAt: string;
  /** Policy specs the station knows, for the run form's hints. */
  readonly policySpecs: readonly string[];
  /** What the rollout form offers first. */
  readonly defaultPolicy: string;
  /** What the Teleop page can start on this station. */
  readonly teleop: TeleopChoices;
}
