/**
 * The station API: HTTP + a WebSocket event stream on 127.0.0.1, one random token per launch, for
 * the operator UI (served here too) and scripts. Every request passes request-checks.ts first;
 * every body is parsed by request-bodies.ts. The server owns no hardware: the rig is the RigHost's,
 * a rollout is the composition root's RolloutRunner, records are the store's.
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
import { EVENTS_PATH, PROJECTOR_FRAME_PATH, RIG_STREAM_HZ, EVENTS_PROTOCOL, type ApiError, type LayoutView, type ProjectorState, type CalibrationInUse, type CalibrationsView, type RolloutRun, type RunRolloutRequest, type StationEvent, type StationInfo } from './api-types.js';
import { ApiRefusal, checkPeerAndHost, checkPostOrigin, checkRequest, checkUpgradeOrigin, fragmentRedirect, isLoopback, newToken, readJsonBody } from './request-checks.js';
import { parseEmptyBody, parseEndSession, parseId, parseResumeSession, parseLayoutSetSha, parseRigCommand, parseRunRollout, parseRolloutScore, parseSampleLayoutSet, parseSessionAnswer, parseStartSession, parseStartTeleop, parseResumeTeleop, parseTeleopControl } from './request-bodies.js';
import type { SessionHost } from './session-host.js';
import type { TeleopHost } from './teleop-host.js';
import { readUpload, storeUpload, uploadName, UPLOAD_KINDS } from './uploads.js';
import type { UploadKind } from './api-types.js';
import { layoutTopViewSvg } from '../layouts/top-view.js';
import { compareChoices, compareReport, compareReportQuery, compareView } from './compare-view.js';
import { ReportThread } from './report-thread.js';
import { pickReplayPair, readTrace, replayView } from './replay-view.js';
import { EpisodeExportError } from '../record/episode-streams.js';
import { rigToUrdf } from '../rig/urdf.js';
import type { DriftThresholds } from '../analysis/sim-drift.js';
import { sampleLayoutSet } from '../layouts/layout-set.js';
import { LayoutSetError } from '../layouts/errors.js';
import { RigBusyError, type RigHost } from './rig-host.js';
import { layoutSetSummary, rolloutDetail, rolloutSummary, type ViewContext } from './store-views.js';
import type { UiFile } from './ui-bundle.js';
import { DEFAULT_SEND_BUDGET_BYTES, sendWithinBudget } from './send-budget.js';
import { RolloutScoreRefusal, scoreStoredRollout } from '../session/rollout-score.js';

/** A rollout checked and ready to run (its policy open); made by RolloutRunner.prepare. */
export interface PreparedRollout {
  readonly policy: string;
  readonly layoutSet: string;
  readonly layout: number;
  readonly seconds: number;
  readonly totalSteps: number;
  /** Runs it on the rig, reporting control steps done; resolves once it is stored. */
  run(onSteps: (stepsDone: number) => void, onPhase: (message: string) => void): Promise<RolloutResultView>;
}

export interface RolloutResultView {
  readonly rolloutId: number;
  readonly status: 'valid' | 'invalid' | 'aborted';
  readonly progress: number | null;
  readonly scoreSummary: string | null;
  readonly message: string;
}

export interface RolloutRunner {
  /** Checks a request against the store and opens its policy; a bad request throws ApiRefusal(400). */
  prepare(req: RunRolloutRequest): Promise<PreparedRollout>;
}

/** What the server knows of the projector: the composition root's feed of frames (it renders them). */
export interface ProjectorFeed {
  state(): ProjectorState;
  /** The PNG on the table now: black before the first frame. */
  frame(): Buffer;
  /** Called with every new frame's state (the server sends it on the event stream). */
  onChange(listener: (state: ProjectorState) => void): void;
}

export interface StationServerOptions {
  readonly store: Store;
  readonly rig: RigHost;
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
  private run: RolloutRun | null = null;
  private runCount = 0;
  private runPromise: Promise<void> | undefined;
  private starting = false;

  constructor(private readonly o: StationServerOptions) {
    this.reports = new ReportThread(o.store.file);
    this.token = o.token ?? newToken();
    // A slow body holds a connection for at most this long (Node's default is 300 s).
    const requestTimeout = o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.http = createServer({ requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.round(requestTimeout / 4))) }, (req, res) => void this.handle(req, res));
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
      this.send(ws, { type: 'hello', station: this.info(), run: this.run });
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
    this.streamTimer = setInterval(() => this.broadcast({ type: 'rig', rig: this.o.rig.status() }), 1000 / RIG_STREAM_HZ);
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
    await this.runPromise;
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
      if (url.pathname !== EVENTS_PATH) throw new ApiRefusal(404, `There is no event stream at ${url.pathname}; it is at ${EVENTS_PATH}.`);
      checkRequest(req, url, { port: this.port, token: this.token });
      checkUpgradeOrigin(req, this.port);
    } catch (e) {
      const refusal = e instanceof ApiRefusal ? e : new ApiRefusal(400, 'Bad upgrade request.');
      const body = JSON.stringify({ error: refusal.message } satisfies ApiError);
      socket.end(`HTTP/1.1 ${refusal.status} Refused\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
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
      res.writeHead(status, { ...headers, 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text), ...extra });
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
      const result = await this.route(method, url, req);
      if (Buffer.isBuffer(result.body)) {
        res.writeHead(result.status ?? 200, { ...headers, 'Content-Type': result.type ?? 'application/octet-stream', 'Content-Length': result.body.length });
        res.end(result.body);
        return;
      }
      if (typeof result.body === 'string') {
        // Text answers (the URDF) go out as they are, not as a JSON string.
        res.writeHead(result.status ?? 200, { ...headers, 'Content-Type': result.type ?? 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(result.body) });
        res.end(result.body);
        return;
      }
      reply(result.status ?? 200, result.body);
    } catch (e) {
      if (e instanceof ApiRefusal) reply(e.status, { error: e.message, ...(e.choices ? { choices: e.choices } : {}) } satisfies ApiError, e.status === 413 ? { Connection: 'close' } : {});
      else if (e instanceof RigBusyError) reply(409, { error: e.message } satisfies ApiError);
      else {
        this.o.logError?.(e);
        reply(500, { error: `The station failed on this request: ${(e as Error).message ?? String(e)}` } satisfies ApiError);
      }
    }
  }

  private async route(method: string, url: URL, req: IncomingMessage): Promise<{ status?: number; body: unknown; type?: string }> {
    const path = url.pathname;
    const { store, views } = this.o;
    const get = method === 'GET';
    const post = method === 'POST';
    if (get && path === '/api/info') return { body: this.info() };
    if (get && path === '/api/rig') return { body: this.o.rig.status() };
    if (get && path === '/api/calibrations') return { body: { inUse: this.o.calibrationsInUse?.() ?? [], stored: store.calibrationKinds() } satisfies CalibrationsView };
    if (post && path === '/api/rig/command') {
      const { command } = parseRigCommand(await readJsonBody(req));
      if (command === 'estop') {
        this.o.rig.estop('the operator pressed E-stop in the station UI');
        this.o.sessions?.estop();
      }
      else {
        // A session owns the arms between its rollouts too (the operator places around them): hold
        // and damp there would move or drop them under the session's feet. E-stop always acts.
        if (this.o.sessions?.working()) throw new RigBusyError(`An eval session has the arms; ${command === 'hold' ? 'Hold' : 'Damp'} is not available until it is stopped for now (Q). Use Abort (S) to stop a rollout, or E-stop (Esc).`);
        if (command === 'hold') await this.o.rig.hold();
        else await this.o.rig.damp();
      }
      return { body: this.o.rig.status() };
    }
    if (get && path === '/api/rig/sim-drift') {
      // A blind session still running keeps its policies' results to itself, as compare does.
      const blind = this.o.sessions?.blindSpecs() ?? new Map<string, number>();
      const excludePolicyIds = store.listPolicies().filter((p) => blind.has(p.spec)).map((p) => p.id);
      return { body: await this.reports.drift({ ...(this.o.simDrift ? { thresholds: this.o.simDrift } : {}), excludePolicyIds }) };
    }
    if (get && path === '/api/rig/urdf') {
      const model = this.o.rig.model();
      if (!model) throw new ApiRefusal(409, 'The rig is not set up yet, so its model is not known; press Hold, or wait for it to come up.');
      return { body: rigToUrdf(model), type: 'application/xml; charset=utf-8' };
    }
    const layoutOne = /^\/api\/layout-sets\/([^/]+)\/layouts\/([^/]+)$/.exec(path);
    if (get && layoutOne) {
      const sha = parseLayoutSetSha(layoutOne[1]);
      const index = layoutOne[2] === '0' ? 0 : parseId(layoutOne[2], 'layout index');
      const set = store.loadLayoutSet(sha);
      if (!set) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
      const layout = set.layouts.find((l) => l.index === index);
      if (!layout) throw new ApiRefusal(404, `Layout set ${sha.slice(0, 12)}… has layouts 0 to ${set.layouts.length - 1}, not ${index}.`);
      return { body: { layoutSet: sha, task: set.task, layout } satisfies LayoutView };
    }
    const topView = /^\/api\/layout-sets\/([^/]+)\/layouts\/([^/]+)\/top-view\.svg$/.exec(path);
    if (get && topView) {
      const sha = parseLayoutSetSha(topView[1]);
      const index = topView[2] === '0' ? 0 : parseId(topView[2], 'layout index');
      const set = store.loadLayoutSet(sha);
      if (!set) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
      if (!set.layouts.some((l) => l.index === index)) throw new ApiRefusal(404, `Layout set ${sha.slice(0, 12)}… has layouts 0 to ${set.layouts.length - 1}, not ${index}.`);
      return { body: layoutTopViewSvg(set, index, 900), type: 'image/svg+xml; charset=utf-8' };
    }
    const projector = this.o.projector;
    if (projector && path.startsWith('/api/projector')) {
      if (get && path === '/api/projector') return { body: projector.state() };
      if (get && path === PROJECTOR_FRAME_PATH) return { body: projector.frame(), type: 'image/png' };
      if (path === '/api/projector' || path === PROJECTOR_FRAME_PATH) throw new ApiRefusal(405, `${method} is not allowed on ${path}.`);
    }
    const sessions = this.o.sessions;
    if (sessions && path.startsWith('/api/session')) {
      const resume = /^\/api\/sessions\/([^/]+)\/resume$/.exec(path);
      const end = /^\/api\/sessions\/([^/]+)\/end$/.exec(path);
      const results = /^\/api\/sessions\/([^/]+)\/results$/.exec(path);
      if (get && results) return { body: sessions.results(parseId(results[1], 'session')) };
      if (get && path === '/api/sessions') return { body: sessions.list() };
      if (get && path === '/api/session') return { body: sessions.view() };
      if (post && path === '/api/sessions') {
        const r = parseStartSession(await readJsonBody(req));
        this.refuseIfRigBusy('starting a session');
        return { status: 201, body: await sessions.start(r) };
      }
      if (post && resume) {
        const id = parseId(resume[1], 'session');
        const { requestId } = parseResumeSession(await readJsonBody(req));
        this.refuseIfRigBusy('resuming a session');
        return { body: await sessions.resume(id, undefined, requestId) };
      }
      if (post && end) {
        const id = parseId(end[1], 'session');
        return { body: sessions.end(id, parseEndSession(await readJsonBody(req)).reason) };
      }
      if (post && path === '/api/session/answer') return { body: { session: await sessions.answer(parseSessionAnswer(await readJsonBody(req))) } };
      if (['/api/sessions', '/api/session', '/api/session/answer'].includes(path) || resume || end || results) throw new ApiRefusal(405, `${method} is not allowed on ${path}.`);
    }
    const upload = /^\/api\/uploads\/([^/]+)$/.exec(path);
    if (upload) {
      const kind = upload[1] as UploadKind;
      if (!UPLOAD_KINDS.includes(kind)) throw new ApiRefusal(404, `The station takes uploads of ${UPLOAD_KINDS.join(', ')}, not '${upload[1].slice(0, 40)}'.`);
      if (!post) throw new ApiRefusal(405, `${method} is not allowed on ${path}; POST the file as the body.`);
      const name = uploadName(url.searchParams.get('name'), kind);
      const body = await readUpload(req, kind);
      const result = await storeUpload(store, this.o.info.dataDir, kind, name, body);
      return { status: result.inserted ? 201 : 200, body: result };
    }
    const teleop = this.o.teleop;
    if (teleop && path.startsWith('/api/teleop')) {
      if (get && path === '/api/teleop') return { body: teleop.view() };
      if (post && path === '/api/teleop/start') {
        const r = parseStartTeleop(await readJsonBody(req));
        this.refuseIfRigBusy('starting a teleop recording');
        return { status: 201, body: await teleop.start(r) };
      }
      if (get && path === '/api/teleop/resumable') return { body: teleop.resumable() };
      if (post && path === '/api/teleop/resume') {
        const r = parseResumeTeleop(await readJsonBody(req));
        this.refuseIfRigBusy('resuming a teleop recording');
        return { status: 201, body: await teleop.resume(r) };
      }
      if (post && path === '/api/teleop/control') return { body: teleop.control(parseTeleopControl(await readJsonBody(req))) };
      if (['/api/teleop', '/api/teleop/start', '/api/teleop/resumable', '/api/teleop/resume', '/api/teleop/control'].includes(path)) throw new ApiRefusal(405, `${method} is not allowed on ${path}.`);
    }
    if (get && path === '/api/compare/choices') {
      const specs = this.o.sessions?.blindSpecs() ?? new Map<string, number>();
      const blind = (policyId: number): boolean => specs.has(views.policy(policyId)?.spec ?? '');
      return { body: compareChoices(store.listRollouts().filter((r) => !blind(r.policyId)), (id) => this.policyView(id), views.taskOf) };
    }
    if (get && path === '/api/compare/report') {
      const options = compareReportQuery(url.searchParams, { loadLayoutSet: (sha) => store.loadLayoutSet(sha), policiesOnSet: (sha) => [...new Set(store.listRollouts({ layoutSetSha256: sha }).map((r) => r.policyId))].sort((a, b) => a - b) });
      for (const p of options.policies) this.refuseIfBlind(p);
      return { body: await compareReport((o) => this.reports.build(o), options, views.isCellMarker) };
    }
    if (get && path === '/api/compare/replay') {
      const policyId = parseId(url.searchParams.get('policy') ?? '', 'policy');
      this.refuseIfBlind(String(policyId));
      const sha = parseLayoutSetSha(url.searchParams.get('layoutSet') ?? '');
      const layoutText = url.searchParams.get('layout') ?? '';
      const layout = layoutText === '0' ? 0 : parseId(layoutText, 'layout index');
      const { real, sim } = pickReplayPair(store.listRollouts({ policyId, layoutSetSha256: sha }), layout);
      if (!real) throw new ApiRefusal(404, `No real rollout of this policy on layout ${layout} has an episode file to replay; rollouts on the rig are recorded from now on.`);
      const read = async (r: typeof real): Promise<Awaited<ReturnType<typeof readTrace>>> => {
        try {
          return await readTrace(r);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') throw new ApiRefusal(409, `Rollout ${r.id}'s episode file ${r.episodeFile} is gone from the disk.`);
          if (e instanceof EpisodeExportError) throw new ApiRefusal(409, `Rollout ${r.id}'s episode file cannot be replayed: ${e.message}`);
          throw e;
        }
      };
      const realTrace = await read(real);
      const simTrace = sim ? await read(sim) : null;
      const note = sim ? null : `No recorded sim rollout of this policy on layout ${layout}: run 'tandem sim sweep --layouts FILE --policy SPEC --record DIR' on this set to get its twin.`;
      return { body: replayView(realTrace, simTrace, note) };
    }
    if (get && path === '/api/compare') {
      const policyId = parseId(url.searchParams.get('policy') ?? '', 'policy');
      const sha = parseLayoutSetSha(url.searchParams.get('layoutSet') ?? '');
      const set = store.loadLayoutSet(sha);
      if (!set) throw new ApiRefusal(404, `There is no layout set ${sha.slice(0, 12)}… in the store.`);
      if (!views.policy(policyId)) throw new ApiRefusal(404, `There is no policy ${policyId} in the store.`);
      this.refuseIfBlind(String(policyId));
      const rollouts = store.listRollouts({ policyId, layoutSetSha256: sha });
      return { body: compareView({ policy: this.policyView(policyId), layoutSet: { sha256: sha, task: set.task, layouts: set.layouts }, rollouts, isCellMarker: views.isCellMarker }) };
    }
    if (get && path === '/api/layout-sets') return { body: store.listLayoutSets().map((r) => layoutSetSummary(r, views.episodeSecondsOf(r.task))) };
    if (post && path === '/api/layout-sets/sample') {
      const r = parseSampleLayoutSet(await readJsonBody(req));
      let set;
      try {
        set = sampleLayoutSet({ task: r.task, tiers: [...r.tiers], perTier: r.perTier, seed: r.seed });
      } catch (e) {
        if (e instanceof LayoutSetError || e instanceof RangeError) throw new ApiRefusal(400, e.message);
        throw e;
      }
      const { record } = store.putLayoutSet(set);
      return { status: 201, body: layoutSetSummary(record, views.episodeSecondsOf(record.task)) };
    }
    if (get && path === '/api/rollouts') {
      const limit = url.searchParams.has('limit') ? parseId(url.searchParams.get('limit') ?? '', 'limit') : 200;
      const blind = this.o.sessions?.blindLabels() ?? new Map<number, string>();
      return { body: store.listRollouts().reverse().slice(0, limit).map((r) => this.blinded(rolloutSummary(r, views), blind)) };
    }
    const one = /^\/api\/rollouts\/([^/]+)$/.exec(path);
    if (get && one && one[1] !== 'run' && one[1] !== 'stop') {
      const id = parseId(one[1], 'rollout');
      const r = store.getRollout(id);
      if (!r) throw new ApiRefusal(404, `There is no rollout ${id} in the store.`);
      return { body: this.blinded(rolloutDetail(r, views), this.o.sessions?.blindLabels() ?? new Map<number, string>()) };
    }
    const scoring = /^\/api\/rollouts\/([^/]+)\/score$/.exec(path);
    if (post && scoring) {
      const id = parseId(scoring[1], 'rollout');
      const body = parseRolloutScore(await readJsonBody(req));
      try {
        return { status: 201, body: scoreStoredRollout(store, { rolloutId: id, ...body }) };
      } catch (e) {
        if (e instanceof RolloutScoreRefusal) throw new ApiRefusal(e.message.startsWith('There is no rollout') ? 404 : 409, e.message);
        throw e;
      }
    }
    if (get && path === '/api/run') return { body: this.run };
    if (post && path === '/api/rollouts/run') return { status: 202, body: await this.startRun(parseRunRollout(await readJsonBody(req))) };
    if (post && path === '/api/rollouts/stop') {
      parseEmptyBody(await readJsonBody(req), 'A stop request');
      if (this.o.sessions?.stopRollout()) return { status: 202, body: this.run };
      return { body: this.stopRun() };
    }
    if (path.startsWith('/api/')) {
      const known = ['/api/info', '/api/rig', '/api/calibrations', '/api/rig/command', '/api/rig/urdf', '/api/rig/sim-drift', '/api/layout-sets', '/api/layout-sets/sample', '/api/rollouts', '/api/run', '/api/rollouts/run', '/api/rollouts/stop', '/api/compare', '/api/compare/choices', '/api/compare/replay', '/api/compare/report'];
      if (known.includes(path) || one || layoutOne || topView) throw new ApiRefusal(405, `${method} is not allowed on ${path}.`);
    }
    throw new ApiRefusal(404, `There is nothing at ${path}.`);
  }

  /**
   * Compare leaves the rollouts of blind sessions still running out of its picker's counts and
   * refuses to compare those sessions' policies until they end: a count or a progress per policy
   * (even an empty one) would say which label is which.
   */
  private refuseIfBlind(policy: string): void {
    const specs = this.o.sessions?.blindSpecs() ?? new Map<string, number>();
    const spec = /^\d+$/.test(policy) ? this.o.views.policy(Number(policy))?.spec : policy;
    const session = spec === undefined ? undefined : specs.get(spec);
    if (session !== undefined) throw new ApiRefusal(409, `Policy ${policy} runs in blind session ${session}, which has not ended: comparing it now would show which label it is. Compare it once the session ends.`);
  }

  /** A rollout of a blind session that has not ended shows its label, never its policy. */
  private blinded<T extends { id: number; policy: { id: number; name: string; spec: string } }>(r: T, labels: ReadonlyMap<number, string>): T {
    const label = labels.get(r.id);
    if (label === undefined) return r;
    // Every word that names it (a reason, a policy error, an episode file's name) says the label instead.
    let text = JSON.stringify({ ...r, policy: { id: 0, name: label, spec: '' } });
    for (const word of [r.policy.spec, r.policy.name].filter((w) => w.length > 0).sort((a, b) => b.length - a.length)) {
      text = text.split(JSON.stringify(word).slice(1, -1)).join(label);
    }
    return JSON.parse(text) as T;
  }

  private policyView(id: number): { id: number; name: string; spec: string } {
    const p = this.o.views.policy(id);
    return { id, name: p?.name ?? `policy ${id}`, spec: p?.spec ?? '' };
  }

  /**
   * Stop, not E-stop: the rollout's loop ends at its next step, the rig holds its pose while the
   * table settles, then damps; the rollout is stored as aborted (stopped by the operator).
   */
  private stopRun(): RolloutRun {
    const run = this.run;
    const live = run && (run.phase === 'starting' || run.phase === 'running' || run.phase === 'storing');
    if (!live || !this.o.rig.stopRollout()) throw new ApiRefusal(409, 'No rollout is running; there is nothing to stop.');
    this.run = { ...run, message: 'Stopping: the rig holds its pose, then damps; the rollout is stored as aborted.' };
    this.broadcast({ type: 'run', run: this.run });
    return this.run;
  }

  /** One user of the rig at a time: a single rollout, an eval session, or a teleop recording. */
  private refuseIfRigBusy(what: string): void {
    if (this.liveRun()) throw new RigBusyError(`A single rollout is running; wait for it to end before ${what}.`);
    if (this.o.sessions?.working()) throw new RigBusyError(`An eval session has the rig; stop it for now before ${what}.`);
    if (this.o.teleop?.working()) throw new RigBusyError(`A teleop recording has the rig; stop it (Q) before ${what}.`);
  }

  private liveRun(): boolean {
    return this.starting || (this.run !== null && (this.run.phase === 'starting' || this.run.phase === 'running' || this.run.phase === 'storing'));
  }

  private async startRun(req: RunRolloutRequest): Promise<RolloutRun> {
    if (this.o.sessions?.working()) throw new RigBusyError('An eval session has the rig; run single rollouts once it is stopped or ended.');
    if (this.o.teleop?.working()) throw new RigBusyError('A teleop recording has the rig; run single rollouts once it is stopped (Q).');
    if (this.starting || (this.run && (this.run.phase === 'starting' || this.run.phase === 'running' || this.run.phase === 'storing'))) {
      throw new RigBusyError('A rollout is already running; wait for it to end or press E-stop.');
    }
    this.starting = true;
    let prepared: PreparedRollout;
    try {
      prepared = await this.o.rollouts.prepare(req);
    } finally {
      this.starting = false;
    }
    const runId = ++this.runCount;
    let run: RolloutRun = {
      runId,
      phase: 'starting',
      policy: prepared.policy,
      layoutSet: prepared.layoutSet,
      layout: prepared.layout,
      seconds: prepared.seconds,
      stepsDone: 0,
      totalSteps: prepared.totalSteps,
      message: 'Bringing the rig up with the layout on its table…',
      rolloutId: null,
      status: null,
      progress: null,
      scoreSummary: null,
    };
    const update = (patch: Partial<RolloutRun>): void => {
      run = { ...run, ...patch };
      this.run = run;
      this.broadcast({ type: 'run', run });
    };
    update({});
    let lastSentSteps = -1;
    const progressTimer = setInterval(() => {
      if (run.stepsDone !== lastSentSteps) {
        lastSentSteps = run.stepsDone;
        this.broadcast({ type: 'run', run });
      }
    }, 200);
    const started = run;
    this.runPromise = prepared
      .run(
        (steps) => {
          if (run.phase === 'starting') update({ phase: 'running', message: `Running ${prepared.policy} for ${prepared.seconds} s.` });
          run = { ...run, stepsDone: Math.min(steps, run.totalSteps) };
          this.run = run;
          if (steps >= run.totalSteps && run.phase === 'running') update({ phase: 'storing', message: 'Episode done; the rig holds while the table settles, then damps.' });
        },
        (message) => update({ message }),
      )
      .then(
        (r) => update({ phase: 'done', rolloutId: r.rolloutId, status: r.status, progress: r.progress, scoreSummary: r.scoreSummary, message: r.message }),
        (e: unknown) => {
          if (!(e instanceof ApiRefusal) && !(e instanceof RigBusyError)) this.o.logError?.(e);
          update({ phase: 'failed', message: (e as Error).message ?? String(e) });
        },
      )
      .finally(() => {
        clearInterval(progressTimer);
        this.broadcast({ type: 'rollouts-changed' });
      });
    return started;
  }
}
