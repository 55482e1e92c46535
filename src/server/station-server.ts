/**
 * The station API: HTTP + a WebSocket event stream on 127.0.0.1, one random token per launch, for
 * the operator UI (served here too) and scripts. Every request passes request-checks.ts first;
 * then the route table (routes/, one module per feature) answers it, each body parsed by
 * request-bodies.ts. The server owns no hardware: the rig is the RigHost's, a rollout is the
 * composition root's RolloutRunner, records are the store's.
 *
 *   GET  /api/info                 station, rig type, policy specs
 *   GET  /api/rig                  rig status (mode, motors, faults in words, cell margin)
 *   GET  /api/calibrations         the calibrations in use (rig model, sim twin, cameras, projector) and the store's per kind
 *   POST /api/rig/command          {"command": "hold" | "damp" | "estop"}
 *   GET  /api/layout-sets          layout sets in the store
 *   POST /api/layout-sets/sample   {"task", "tiers", "perTier", "seed"}: draw one (as 'tandem layouts sample') into the store
 *   GET  /api/rollouts[?limit=N]   stored rollouts, newest first
 *   GET  /api/rollouts/ID          one rollout with its score
 *   GET  /api/run                  the rollout running now (or the last one), or null
 *   POST /api/rollouts/run         {"policy", "layoutSet", "layout", "seconds"?, "seed"?, "scoreFromCell"?}
 *   POST /api/rollouts/stop        {}: stop the rollout in flight, single or a session's (the rig holds, then damps; stored as aborted)
 *   POST /api/rollouts/ID/score    {"endStates", "reason"?, "operator"?}: the operator's score of a rig rollout (a re-score needs a reason)
 *   GET  /api/compare/choices      policies × layout sets with stored rollouts
 *   GET  /api/compare?policy=ID&layoutSet=SHA   real vs sim task progress per layout and per tier
 *   GET  /api/compare/replay?policy=ID&layoutSet=SHA&layout=N   a recorded real episode's joint states beside its sim twin's, with the joint error
 *   GET  /api/compare/report?layoutSet=SHA[&policies=ID,…][&simCalibration=SHA][&realCalibration=SHA][&episodeSeconds=S]   the paired report's data, as 'tandem report --json'
 *   GET  /api/layout-sets/SHA/layouts/N         one layout (the 3D view)
 *   GET  /api/rig/urdf             the rig's URDF (the 3D view's arms)
 *   GET  /api/rig/sim-drift        per layout set, the sim twin's agreement with the rig evaluation after evaluation, and the drift alarms
 *   GET  /api/layout-sets/SHA/layouts/N/top-view.svg   the layout from above (the session's rollout card)
 *   GET  /api/sessions             eval sessions in the store (open and ended)
 *   POST /api/sessions             {"layoutSet", "policies", "perLayout", "blind", "minutes"?, …}: plan and start one
 *   POST /api/sessions/ID/resume   {"requestId"?}: carry on a stopped session at its exact step
 *   POST /api/sessions/ID/end      {"reason"}: end a session that is not running (journalled with the reason)
 *   GET  /api/sessions/ID/results  per policy and tier the progress with intervals, the A/B verdict, the scored episodes, the blind key once ended
 *   GET  /api/session              the session the station runs now (or null)
 *   POST /api/session/answer       {"prompt", "answer"}: the operator's answer, acknowledged once journalled
 *   POST /api/uploads/KIND?name=F  the file as the body (layout-set, sim-calibration, policy): size-limited, validated, stored
 *   GET  /api/teleop               the teleop recording (or null)
 *   POST /api/teleop/start         {"task", "episodes", "seconds", "resetSeconds"?, "cameras", "leader", "layoutSet"?, "layout"?}: 'tandem teleop record' on the station's rig
 *   GET  /api/teleop/resumable     the stopped teleop session '--resume' would carry on (or null)
 *   POST /api/teleop/resume        {"sessionId", "episodes"?}: carry it on at its next episode, as 'tandem teleop record --resume'
 *   POST /api/teleop/control       {"action": "next" | "discard" | "sync" | "quit"}: the keys of 'tandem teleop record'
 *   GET  /api/projector            what the projector shows (layout footprints, black) and with which calibration
 *   GET  /api/projector/frame.png  the frame on the table now (black before the first); the /projector page shows it
 *   WS   /api/events               hello, rig state at RIG_STREAM_HZ, run progress, rollouts-changed, session, teleop, projector
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Store } from '../store/store.js';
import type { DriftThresholds } from '../analysis/sim-drift.js';
import {
  EVENTS_PATH,
  RIG_STREAM_HZ,
  EVENTS_PROTOCOL,
  type ApiError,
  type CalibrationInUse,
  type StationEvent,
  type StationInfo,
} from './api-types.js';
import {
  ApiRefusal,
  checkPeerAndHost,
  checkPostOrigin,
  checkRequest,
  checkUpgradeOrigin,
  fragmentRedirect,
  isLoopback,
  newToken,
} from './request-checks.js';
import type { SessionHost } from './session-host.js';
import type { TeleopHost } from './teleop-host.js';
import { ReportThread } from './report-thread.js';
import { RigBusyError, type RigHost } from './rig-host.js';
import type { ViewContext } from './store-views.js';
import type { UiFile } from './ui-bundle.js';
import { DEFAULT_SEND_BUDGET_BYTES, sendWithinBudget } from './send-budget.js';
import type { ProjectorFeed } from './projector-feed.js';
import { SingleRollouts, type RolloutRunner } from './single-rollouts.js';
import { BlindViews } from './blind-views.js';
import { RouteTable, type Route } from './routes/route-table.js';
import type { StationContext } from './routes/context.js';
import { stationRoutes } from './routes/station.js';
import { rigRoutes } from './routes/rig.js';
import { layoutSetRoutes } from './routes/layout-sets.js';
import { rolloutRoutes } from './routes/rollouts.js';
import { compareRoutes } from './routes/compare.js';
import { projectorRoutes } from './routes/projector.js';
import { sessionRoutes } from './routes/sessions.js';
import { teleopRoutes } from './routes/teleop.js';
import { uploadRoutes } from './routes/uploads.js';

export interface StationServerOptions {
  readonly store: Store;
  readonly rig: RigHost<unknown>;
  readonly rollouts: RolloutRunner;
  readonly ui: ReadonlyMap<string, UiFile>;
  readonly info: Omit<StationInfo, 'rigType'>;
  readonly views: ViewContext;
  /** The eval session (the Session view); without it the session routes answer 404. */
  readonly sessions?: SessionHost;
  /** The teleop recording (the Teleop view); without it the teleop routes answer 404. */
  readonly teleop?: TeleopHost;
  /** The projector's frames; without it the projector routes answer 404. */
  readonly projector?: ProjectorFeed;
  /** The calibrations the station runs with (the composition root knows them); the store's are added here. */
  readonly calibrationsInUse?: () => readonly CalibrationInUse[];
  /** The sim-twin drift alarm's thresholds (the station config's 'simDrift'); unset ones keep their defaults. */
  readonly simDrift?: Partial<DriftThresholds>;
  /** Default 0: any free port. */
  readonly port?: number;
  /** Default a fresh random token. */
  readonly token?: string;
  /** An event-stream client's unsent bytes past this and it is disconnected; default 1 MiB. */
  readonly sendBudgetBytes?: number;
  /** A request whose headers and body have not all arrived by then is answered 408 and closed; default 30 s. */
  readonly requestTimeoutMs?: number;
  /** Unexpected errors (a bug, not bad input): logged, answered with a 500 sentence. */
  readonly logError?: (e: unknown) => void;
}

const JSON_TYPE = 'application/json; charset=utf-8';
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

function securityHeaders(port: number): Record<string, string> {
  return {
    'Content-Security-Policy': `default-src 'self'; connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-store',
  };
}

export class StationServer {
  readonly token: string;
  private readonly http: Server;
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: 1024,
    // The page offers the event protocol and its token; the answer names only the former.
    handleProtocols: (offered) => (offered.has(EVENTS_PROTOCOL) ? EVENTS_PROTOCOL : false),
  });
  /** The compare view's paired reports are built off this thread (it also runs the rig's loop). */
  private readonly reports: ReportThread;
  private port = 0;
  private streamTimer: NodeJS.Timeout | undefined;
  private readonly singleRollouts: SingleRollouts;
  private readonly routes: RouteTable;

  constructor(private readonly o: StationServerOptions) {
    this.reports = new ReportThread(o.store.file);
    this.singleRollouts = new SingleRollouts({ ...o, broadcast: (event) => this.broadcast(event) });
    this.routes = new RouteTable(this.routeList());
    this.token = o.token ?? newToken();
    // A slow body holds a connection for at most this long (Node's default is 300 s).
    const requestTimeout = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.http = createServer(
      {
        requestTimeout,
        headersTimeout: requestTimeout,
        connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.round(requestTimeout / 4))),
      },
      (req, res) => void this.handle(req, res),
    );
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
    if (o.sessions) {
      let wasRunning = false;
      let wasScoring = false;
      o.sessions.publish = (session) => {
        this.broadcast({ type: 'session', session });
        // A session rollout just ended and is stored, or its score was just stored (the score step
        // is over): the Rollouts list and Compare follow, as after a single run.
        const running = session?.running != null;
        const scoring = session?.phase === 'score';
        if ((wasRunning && !running) || (wasScoring && !scoring)) this.broadcast({ type: 'rollouts-changed' });
        wasRunning = running;
        wasScoring = scoring;
      };
    }
    if (o.teleop) o.teleop.publish = (teleop) => this.broadcast({ type: 'teleop', teleop });
    o.projector?.onChange((projector) => this.broadcast({ type: 'projector', projector }));
    // The UI only listens; a message from a client is ignored, and a big one closes it (maxPayload).
    this.wss.on('connection', (ws: WebSocket) => {
      ws.on('error', () => {});
      this.send(ws, { type: 'hello', station: this.info(), run: this.singleRollouts.current() });
      this.send(ws, { type: 'rig', rig: this.o.rig.status() });
      if (this.o.sessions) this.send(ws, { type: 'session', session: this.o.sessions.view() });
      if (this.o.teleop) this.send(ws, { type: 'teleop', teleop: this.o.teleop.view() });
      if (this.o.projector) this.send(ws, { type: 'projector', projector: this.o.projector.state() });
    });
  }

  /** Listens on 127.0.0.1 only; returns the URL to open, token included. */
  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.o.port ?? 0, '127.0.0.1', () => {
        this.http.off('error', reject);
        resolve();
      });
    });
    this.port = (this.http.address() as AddressInfo).port;
    this.streamTimer = setInterval(
      () => this.broadcast({ type: 'rig', rig: this.o.rig.status() }),
      1000 / RIG_STREAM_HZ,
    );
    return this.url;
  }

  /** The page's address with the token in its fragment, which the browser never sends to a server. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/#token=${this.token}`;
  }

  /** Stops the stream and the listener; the rollout in flight (if any) is stopped by the rig host's close. */
  async close(): Promise<void> {
    clearInterval(this.streamTimer);
    await this.reports.close();
    for (const ws of this.wss.clients) ws.close(1001, 'station shutting down');
    this.wss.close();
    this.http.closeAllConnections();
    await new Promise<void>((resolve) => this.http.close(() => resolve()));
  }

  /** Resolves when the current rollout (if any) has ended and been stored. */
  async settled(): Promise<void> {
    await this.singleRollouts.settled();
  }

  private info(): StationInfo {
    return { ...this.o.info, rigType: this.o.rig.type };
  }

  private send(ws: WebSocket, event: StationEvent): void {
    // A client that stops reading is disconnected at its budget rather than buffered without bound.
    sendWithinBudget(ws, JSON.stringify(event), this.o.sendBudgetBytes ?? DEFAULT_SEND_BUDGET_BYTES);
  }

  private broadcast(event: StationEvent): void {
    if (this.wss.clients.size === 0) return;
    const text = JSON.stringify(event);
    for (const ws of this.wss.clients) sendWithinBudget(ws, text, this.o.sendBudgetBytes ?? DEFAULT_SEND_BUDGET_BYTES);
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {});
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname !== EVENTS_PATH)
        throw new ApiRefusal(404, `There is no event stream at ${url.pathname}; it is at ${EVENTS_PATH}.`);
      checkRequest(req, url, { port: this.port, token: this.token });
      checkUpgradeOrigin(req, this.port);
    } catch (e) {
      const refusal = e instanceof ApiRefusal ? e : new ApiRefusal(400, 'Bad upgrade request.');
      const body = JSON.stringify({ error: refusal.message } satisfies ApiError);
      socket.end(
        `HTTP/1.1 ${refusal.status} Refused\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isLoopback(req.socket.remoteAddress)) {
      req.socket.destroy();
      return;
    }
    const headers = securityHeaders(this.port);
    const reply = (status: number, body: unknown, extra: Record<string, string> = {}): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        ...headers,
        'Content-Type': JSON_TYPE,
        'Content-Length': Buffer.byteLength(text),
        ...extra,
      });
      res.end(text);
    };
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const method = req.method ?? 'GET';
      // The UI's own files hold no secret: they load without the token, which the page then reads
      // from its fragment and sends with every API request.
      const file = method === 'GET' ? this.o.ui.get(url.pathname) : undefined;
      if (file) {
        checkPeerAndHost(req, this.port);
        const moved = fragmentRedirect(url, this.token);
        if (moved !== undefined) {
          res.writeHead(303, { ...headers, Location: moved });
          res.end();
          return;
        }
        res.writeHead(200, { ...headers, 'Content-Type': file.type, 'Content-Length': file.body.length });
        res.end(file.body);
        return;
      }
      checkRequest(req, url, { port: this.port, token: this.token });
      if (method === 'POST') checkPostOrigin(req, this.port);
      const result = await this.routes.dispatch(method, url, req);
      if (Buffer.isBuffer(result.body)) {
        res.writeHead(result.status ?? 200, {
          ...headers,
          'Content-Type': result.type ?? 'application/octet-stream',
          'Content-Length': result.body.length,
        });
        res.end(result.body);
        return;
      }
      if (typeof result.body === 'string') {
        // Text answers (the URDF) go out as they are, not as a JSON string.
        res.writeHead(result.status ?? 200, {
          ...headers,
          'Content-Type': result.type ?? 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(result.body),
        });
        res.end(result.body);
        return;
      }
      reply(result.status ?? 200, result.body);
    } catch (e) {
      if (e instanceof ApiRefusal)
        reply(
          e.status,
          { error: e.message, ...(e.choices ? { choices: e.choices } : {}) } satisfies ApiError,
          e.status === 413 ? { Connection: 'close' } : {},
        );
      else if (e instanceof RigBusyError) reply(409, { error: e.message } satisfies ApiError);
      else {
        this.o.logError?.(e);
        reply(500, {
          error: `The station failed on this request: ${(e as Error).message ?? String(e)}`,
        } satisfies ApiError);
      }
    }
  }

  /** One user of the rig at a time: a single rollout, an eval session, or a teleop recording. */
  private refuseIfRigBusy(what: string): void {
    if (this.singleRollouts.live())
      throw new RigBusyError(`A single rollout is running; wait for it to end before ${what}.`);
    if (this.o.sessions?.working())
      throw new RigBusyError(`An eval session has the rig; stop it for now before ${what}.`);
    if (this.o.teleop?.working()) throw new RigBusyError(`A teleop recording has the rig; stop it (Q) before ${what}.`);
  }

  /** Every route the station answers; a feature the composition root did not give has none (404). */
  private routeList(): Route[] {
    const { o } = this;
    const s: StationContext = {
      store: o.store,
      views: o.views,
      rig: o.rig,
      sessions: o.sessions,
      teleop: o.teleop,
      projector: o.projector,
      singleRollouts: this.singleRollouts,
      blind: new BlindViews(o.sessions, o.views),
      reports: this.reports,
      dataDir: o.info.dataDir,
      calibrationsInUse: o.calibrationsInUse,
      simDrift: o.simDrift,
      info: () => this.info(),
      refuseIfRigBusy: (what) => this.refuseIfRigBusy(what),
    };
    return [
      ...stationRoutes(s),
      ...rigRoutes(s),
      ...layoutSetRoutes(s),
      ...rolloutRoutes(s),
      ...compareRoutes(s),
      ...uploadRoutes(s),
      ...(o.projector ? projectorRoutes(o.projector) : []),
      ...(o.sessions ? sessionRoutes(s, o.sessions) : []),
      ...(o.teleop ? teleopRoutes(s, o.teleop) : []),
    ];
  }
}
