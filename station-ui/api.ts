/**
 * The UI's one typed client of the station API: requests, and the event stream every view reads.
 * Every request carries the launch token in its header (token.ts); the event stream offers it as a subprotocol.
 */
import {
  EVENTS_PATH,
  type ApiError,
  type CalibrationsView,
  type CompareChoice,
  type CompareView,
  type LayoutView,
  type ReplayView,
  type LayoutSetSummary,
  type RigCommandName,
  type RolloutDetail,
  type RolloutRun,
  type RolloutSummary,
  type RunRolloutRequest,
  type RolloutScoreRequest,
  type SampleLayoutSetRequest,
  type SessionAnswerRequest,
  type SessionAnswerResponse,
  type SessionResults,
  type SessionSummary,
  type SessionView,
  type StartSessionRequest,
  type StartTeleopRequest,
  type ResumeTeleopRequest,
  type TeleopResumable,
  type TeleopControlName,
  type TeleopView,
  type UploadKind,
  type UploadResult,
  type StationEvent,
  type StationInfo,
} from '../src/server/api-types.js';
import { eventProtocols, hasToken, tokenHeaders } from './token.js';

export class ApiFailure extends Error {}

/** The request never reached the station (it is down), or reached one that no longer takes this page's key (restarted). */
export class StationUnreachable extends ApiFailure {}

/**
 * What an operator reads when a request did not reach the station, headed by what did not happen
 * ("Not stored", "Not done"): never the browser's "Failed to fetch".
 */
export function unreachableWords(notDone: string, why: 'down' | 'restarted'): string {
  return why === 'down'
    ? `${notDone} — the station is not answering (it stopped or crashed).`
    : `${notDone} — the station was restarted, and this page still has the old launch's key: open the station's new address.`;
}

async function call<T>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  notDone = method === 'GET' ? 'No answer' : 'Not done',
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: body === undefined ? tokenHeaders() : { ...tokenHeaders(), 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
    });
  } catch {
    throw new StationUnreachable(unreachableWords(notDone, 'down'));
  }
  if (res.status === 401 && hasToken()) throw new StationUnreachable(unreachableWords(notDone, 'restarted'));
  const data = (await res.json().catch(() => ({ error: `The station answered ${res.status} without a reason.` }))) as
    | T
    | ApiError;
  if (!res.ok) throw new ApiFailure((data as ApiError).error ?? `The station answered ${res.status}.`);
  return data as T;
}

export const api = {
  info: () => call<StationInfo>('GET', '/api/info'),
  rigCommand: (command: RigCommandName) =>
    call<unknown>('POST', '/api/rig/command', { command }, command === 'estop' ? 'E-stop NOT sent' : 'Not done'),
  calibrations: () => call<CalibrationsView>('GET', '/api/calibrations'),
  layoutSets: () => call<LayoutSetSummary[]>('GET', '/api/layout-sets'),
  sampleLayoutSet: (r: SampleLayoutSetRequest) => call<LayoutSetSummary>('POST', '/api/layout-sets/sample', r),
  rollouts: () => call<RolloutSummary[]>('GET', '/api/rollouts'),
  rollout: (id: number) => call<RolloutDetail>('GET', `/api/rollouts/${id}`),
  run: (r: RunRolloutRequest) => call<RolloutRun>('POST', '/api/rollouts/run', r),
  stopRollout: () => call<RolloutRun>('POST', '/api/rollouts/stop', {}),
  scoreRollout: (id: number, r: RolloutScoreRequest) =>
    call<{ progress: number; summary: string; rescored: boolean }>(
      'POST',
      `/api/rollouts/${id}/score`,
      r,
      'Not stored',
    ),
  compareChoices: () => call<CompareChoice[]>('GET', '/api/compare/choices'),
  compare: (policy: number, layoutSet: string) =>
    call<CompareView>('GET', `/api/compare?policy=${policy}&layoutSet=${encodeURIComponent(layoutSet)}`),
  replay: (policy: number, layoutSet: string, layout: number) =>
    call<ReplayView>(
      'GET',
      `/api/compare/replay?policy=${policy}&layoutSet=${encodeURIComponent(layoutSet)}&layout=${layout}`,
    ),
  layout: (layoutSet: string, index: number) =>
    call<LayoutView>('GET', `/api/layout-sets/${encodeURIComponent(layoutSet)}/layouts/${index}`),
  sessions: () => call<SessionSummary[]>('GET', '/api/sessions'),
  session: () => call<SessionView | null>('GET', '/api/session'),
  startSession: (r: StartSessionRequest) => call<SessionView>('POST', '/api/sessions', r, 'Not started'),
  resumeSession: (id: number, requestId: string) =>
    call<SessionView>('POST', `/api/sessions/${id}/resume`, { requestId }),
  sessionResults: (id: number) => call<SessionResults>('GET', `/api/sessions/${id}/results`),
  endSession: (id: number, reason: string) => call<SessionSummary>('POST', `/api/sessions/${id}/end`, { reason }),
  sessionTakeover: () => call<SessionView>('POST', '/api/session/takeover', {}, 'Not taken over'),
  sessionAnswer: (r: SessionAnswerRequest) =>
    call<SessionAnswerResponse>('POST', '/api/session/answer', r, 'Not stored'),
  teleop: () => call<TeleopView | null>('GET', '/api/teleop'),
  startTeleop: (r: StartTeleopRequest) => call<TeleopView>('POST', '/api/teleop/start', r),
  teleopResumable: () => call<TeleopResumable | null>('GET', '/api/teleop/resumable'),
  resumeTeleop: (r: ResumeTeleopRequest) => call<TeleopView>('POST', '/api/teleop/resume', r),
  teleopControl: (action: TeleopControlName) => call<TeleopView>('POST', '/api/teleop/control', { action }),
  /** The file itself as the body (the browser streams it); the station checks and stores it. */
  upload: async (kind: UploadKind, name: string, file: Blob): Promise<UploadResult> => {
    const res = await fetch(`/api/uploads/${kind}?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: { ...tokenHeaders(), 'Content-Type': 'application/octet-stream' },
      body: file,
      credentials: 'omit',
    });
    const data = (await res.json().catch(() => ({ error: `The station answered ${res.status} without a reason.` }))) as
      | UploadResult
      | ApiError;
    if (!res.ok) throw new ApiFailure((data as ApiError).error ?? `The station answered ${res.status}.`);
    return data as UploadResult;
  },
  rigUrdf: async (): Promise<string> => {
    const res = await fetch('/api/rig/urdf', { headers: tokenHeaders(), credentials: 'omit' });
    if (!res.ok)
      throw new ApiFailure(
        ((await res.json().catch(() => ({}))) as ApiError).error ??
          `The station answered ${res.status} for the rig's URDF.`,
      );
    return res.text();
  },
};

type Listener = (e: StationEvent) => void;

/**
 * The page's link to the station: live; lost (nothing answers: stopped, crashed, restarting); or
 * refused (a station answers at this address but not to this page's key — a new launch has a new
 * key, which this page cannot learn: the operator opens the new address).
 */
export type LinkState = 'live' | 'lost' | 'refused';

/** How often a lost station is asked again (one small request; a refused key is not asked again). */
const PROBE_MS = 1000;

/**
 * The event stream, reconnecting after a drop; listeners hear every event. A dropped stream is
 * followed by a plain request, because a browser hides why a WebSocket failed: no answer means
 * the station is down (ask again shortly), a 401 means it was restarted with a new key (stop —
 * the old key will never work again, and looping on refusals helps nobody).
 */
export class EventStream {
  private readonly listeners = new Set<Listener>();
  private readonly statusListeners = new Set<(state: LinkState) => void>();
  private state: LinkState | undefined;

  constructor() {
    this.connect();
  }

  on(l: Listener): void {
    this.listeners.add(l);
  }

  onConnection(l: (state: LinkState) => void): void {
    this.statusListeners.add(l);
  }

  private setState(state: LinkState): void {
    if (state === this.state) return;
    this.state = state;
    this.statusListeners.forEach((l) => l(state));
  }

  private connect(): void {
    const ws = new WebSocket(`ws://${location.host}${EVENTS_PATH}`, eventProtocols());
    ws.onopen = () => this.setState('live');
    ws.onmessage = (m) => {
      const e = JSON.parse(String(m.data)) as StationEvent;
      this.listeners.forEach((l) => l(e));
    };
    ws.onclose = () => void this.probe();
  }

  private async probe(): Promise<void> {
    let status: number;
    try {
      status = (await fetch('/api/info', { headers: tokenHeaders(), credentials: 'omit' })).status;
    } catch {
      this.setState('lost');
      setTimeout(() => void this.probe(), PROBE_MS);
      return;
    }
    if (status === 401) this.setState('refused');
    else if (status === 200) this.connect();
    else {
      this.setState('lost');
      setTimeout(() => void this.probe(), PROBE_MS);
    }
  }
}
