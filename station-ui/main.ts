/**
 * The operator UI's entry: the always-visible status bar and E-stop, the views, and the keyboard.
 * Keys (keys.ts, with the foot pedal's F13–F15): Esc E-stop (always, even in a text field) ·
 * S stop the rollout · H hold · D damp · R run the rollout form · 1–5 views; on the Session page
 * Enter / F13 the step's big button, ↑ ↓ the count, X redo, N close, P pause, Q stop for now. Every view reads the
 * one event stream; actions go through the one API client.
 */
import type {
  RigStatus,
  RolloutRun,
  SessionView as SessionState,
  StationEvent,
  StationInfo,
} from '../src/server/api-types.js';
import { api, EventStream, StationUnreachable, type LinkState } from './api.js';
import { RigView } from './rig/rig-view.js';
import { RolloutsView } from './rollouts/rollouts-view.js';
import { CompareView } from './compare/compare-view.js';
import { SessionView } from './session/session-view.js';
import { TeleopView } from './teleop/teleop-view.js';
import { uploadsPanel } from './uploads/uploads-panel.js';
import { h, refreshAges, setText } from './dom.js';
import { actionForKey } from './keys.js';
import { fragmentFor } from './token.js';
import { groupedFaults, modeWords, rigWords, splitReason, useWords } from './words.js';

const VIEWS = ['rig', 'rollouts', 'session', 'teleop', 'compare'] as const;
type ViewName = (typeof VIEWS)[number];

const $ = (id: string): HTMLElement => document.getElementById(id)!;

function report(message: string, error = false): void {
  const el = $('message');
  const { head, lines } = splitReason(message);
  el.textContent = head ? `${head}: ${lines.join(' · ')}` : lines.join(' · ');
  el.classList.toggle('error', error);
}

function command(name: 'hold' | 'damp' | 'estop'): void {
  api.rigCommand(name).then(
    () =>
      report(
        name === 'estop'
          ? 'E-stop sent: the arms stop, then damp.'
          : name === 'hold'
            ? 'Holding the current pose.'
            : 'Damped: motors off.',
      ),
    // The software E-stop could not reach the station: the cell's own button is what stops the arms now.
    (e: Error) =>
      report(
        name === 'estop' && e instanceof StationUnreachable
          ? `${e.message} Press the cell's hardware E-stop.`
          : e.message,
        true,
      ),
  );
}

/** Where a running station keeps its address (src/app/station-serve.ts STATION_ADDRESS_FILE), for the operator to open. */
const ADDRESS_FILE = 'station-address.txt';

/**
 * The page has lost the station: said in words at the top of every view, with what to do. The
 * page cannot learn a restarted station's new key by itself (only the operator's account may read
 * it, in the address file), so it says where the new address is rather than retrying forever.
 */
function showLinkLost(state: Exclude<LinkState, 'live'>, info: StationInfo | undefined, since: Date): void {
  const el = $('station-lost');
  const file = info
    ? `${info.dataDir.replace(/\/+$/, '')}/${ADDRESS_FILE}`
    : `${ADDRESS_FILE} in the station's data folder`;
  const at = since.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  const head =
    state === 'lost'
      ? `The station is not answering (since ${at}): it stopped or crashed.`
      : info
        ? 'The station was restarted: open its new address.'
        : 'This page has no key for the station: open the address it printed.';
  const lines =
    state === 'lost'
      ? [
          "Nothing you press on this page reaches it — to stop the arms use the cell's hardware E-stop.",
          'When it runs again (npm start), open the address it prints (paste it into this tab); it is also kept in:',
        ]
      : [
          'Each start of the station has a new key, and this page holds the old one, so it cannot reach the new station — nothing on this page is stored any more.',
          "Open the address the station printed when it started (paste it into this tab); it is also kept in a file only the station's user can read:",
        ];
  el.replaceChildren(
    h('div', { class: 'lost-head' }, head),
    ...lines.map((l) => h('p', {}, l)),
    h('code', { id: 'station-address-file' }, `cat ${file}`),
    h(
      'p',
      { class: 'muted' },
      'Open sessions are kept in the store: resume one on the Session page (key 3) of the new address.',
    ),
  );
  el.dataset.state = state;
  el.hidden = false;
  document.body.classList.add('link-lost');
  const mode = $('rig-mode');
  mode.dataset.mode = 'unknown';
  mode.textContent = 'NO STATION';
  $('rig-summary').textContent = "the rig's state is unknown: this page has lost the station";
}

function stopRollout(): void {
  api.stopRollout().then(
    () => report('Stopping the rollout: the rig holds its pose, then damps.'),
    (e: Error) => report(e.message, true),
  );
}

let currentView: ViewName = 'rig';
/** The Rig page's tables at most this often (the stream keeps coming, so the last state is drawn within it). */
const RIG_VIEW_REDRAW_MS = 200;
let onViewChange: (name: ViewName) => void = () => {};

function showView(name: ViewName): void {
  currentView = name;
  onViewChange(name);
  for (const v of VIEWS) {
    $(`view-${v}`).classList.toggle('shown', v === name);
    document.querySelector(`[data-view="${v}"]`)?.toggleAttribute('aria-current', v === name);
    if (v === name) document.querySelector(`[data-view="${v}"]`)?.setAttribute('aria-current', 'page');
  }
  history.replaceState(null, '', fragmentFor(name));
}

function showStatus(rig: RigStatus): void {
  // Written only where it changed (setText): an idle rig's 20 states a second then cost the page nothing.
  const mode = $('rig-mode');
  const shown = modeWords(rig);
  if (mode.dataset.mode !== shown.mode) mode.dataset.mode = shown.mode;
  setText(mode, shown.words);
  const faults = groupedFaults(rig.faults.map((f) => f.message));
  setText(
    $('rig-summary'),
    `${rigWords(rig.type)} — ${useWords(rig) || rig.mode}${faults.length ? ` — fault: ${faults[0]}${faults.length > 1 ? ` (+${faults.length - 1} more on the Rig page)` : ''}` : ''}`,
  );
  // An open interlock is said in the status bar on every page: nothing on the cell starts until it closes.
  const lock = $('interlock');
  const open = rig.interlock?.open === true;
  if (lock.hidden === open) lock.hidden = !open;
  setText(lock, open && rig.interlock ? `Interlock ${rig.interlock.words}` : '');
}

function showRunSummary(run: RolloutRun | null): void {
  const el = $('run-summary');
  if (!run) el.textContent = '';
  else if (run.phase === 'done')
    el.textContent = `Last rollout ${run.rolloutId ?? ''}: ${run.progress === null ? (run.status ?? '') : `progress ${run.progress.toFixed(2)}`}`;
  else if (run.phase === 'failed') el.textContent = 'Last rollout failed (see Rollouts)';
  else el.textContent = `Rollout: ${run.policy}, step ${run.stepsDone}/${run.totalSteps}`;
}

/** The status bar during a session: what runs now, or how far the session is — never a stale single rollout. */
function showSessionSummary(s: SessionState | null): void {
  if (!s || s.phase === 'ended' || s.phase === 'stopped') return;
  const el = $('run-summary');
  const at = `${s.progress.done} of ${s.progress.total} done`;
  el.textContent = s.running ? `Session ${s.id}: ${s.running.label} running · ${at}` : `Session ${s.id}: ${at}`;
}

function main(): void {
  const rigView = new RigView($('view-rig'), { hold: () => command('hold'), damp: () => command('damp') });
  const rollouts = new RolloutsView($('view-rollouts'), { report, stop: stopRollout });
  const compare = new CompareView($('view-compare'), { report });
  const session = new SessionView($('view-session'), {
    report,
    stop: stopRollout,
    openRollout: (id) => {
      showView('rollouts');
      rollouts.select(id).catch((e: Error) => report(e.message, true));
    },
  });
  const teleop = new TeleopView($('view-teleop'), { report });
  // Uploads sit with the forms that use them: under the Rollouts page's run and sample forms.
  const uploads = uploadsPanel({
    report,
    uploaded: () => {
      rollouts.reload().catch((e: Error) => report(e.message, true));
      session.reload().catch((e: Error) => report(e.message, true));
    },
  });
  (document.querySelector('#view-rollouts .grid > div:last-child') ?? $('view-rollouts')).append(uploads);
  const loadCalibrations = (): void =>
    void api.calibrations().then(
      (c) => rigView.showCalibrations(c),
      (e: Error) => report(e.message, true),
    );
  onViewChange = (name) => {
    if (name === 'rig') loadCalibrations();
    if (name === 'session') session.reload().catch((e: Error) => report(e.message, true));
    if (name === 'teleop') teleop.reload().catch((e: Error) => report(e.message, true));
    if (name === 'compare') compare.show().catch((e: Error) => report(e.message, true));
    else compare.hide();
  };
  $('estop').onclick = () => command('estop');
  for (const v of VIEWS) (document.querySelector(`[data-view="${v}"]`) as HTMLElement).onclick = () => showView(v);
  const initial = VIEWS.find((v) => location.hash.replace(/^#/, '').split('&').includes(v)) ?? 'rig';
  showView(initial);

  let latestRig: RigStatus | undefined;
  let drawPending = false;
  let rigViewDrawnAt = -Infinity;
  // "just now" ages on screen without a reload.
  setInterval(() => refreshAges(), 15_000);
  const stream = new EventStream();
  let info: StationInfo | undefined;
  let lostSince: Date | undefined;
  stream.onConnection((state) => {
    const c = $('connection');
    c.textContent =
      state === 'live'
        ? 'live'
        : state === 'lost'
          ? 'station not answering — trying again'
          : 'station restarted — open its new address';
    c.classList.toggle('live', state === 'live');
    if (state === 'live') {
      lostSince = undefined;
      $('station-lost').hidden = true;
      document.body.classList.remove('link-lost');
      rollouts.reload().catch((e: Error) => report(e.message, true));
    } else {
      if (!lostSince) {
        session.freeze();
        const run = $('run-summary');
        if (run.textContent) run.textContent = `Last known: ${run.textContent}`;
      }
      lostSince ??= new Date();
      showLinkLost(state, info, lostSince);
    }
  });
  stream.on((e: StationEvent) => {
    if (e.type === 'hello') {
      info = e.station;
      rollouts.setInfo(e.station);
      teleop.setInfo(e.station);
      session.setInfo(e.station);
      rollouts.showRun(e.run);
      showRunSummary(e.run);
    } else if (e.type === 'rig') {
      // Drawn once per frame at most, and the motor table only while it is on screen: the
      // browser's work stays small beside the station's on a shared machine.
      latestRig = e.rig;
      if (!drawPending) {
        drawPending = true;
        requestAnimationFrame(() => {
          drawPending = false;
          // A frame drawn after the link dropped would show a rig state nobody is reading any more.
          if (!latestRig || lostSince) return;
          showStatus(latestRig);
          // The Rig page rebuilds its tables from each state: a few times a second is as fast as
          // anyone reads them, and at 20 a second the browser's redrawing cost more than the station.
          const now = performance.now();
          if (currentView === 'rig' && now - rigViewDrawnAt >= RIG_VIEW_REDRAW_MS) {
            rigViewDrawnAt = now;
            rigView.show(latestRig);
          }
          if (currentView === 'compare') compare.showRig(latestRig);
          if (currentView === 'teleop') teleop.showRig(latestRig);
        });
      }
    } else if (e.type === 'run') {
      rollouts.showRun(e.run);
      showRunSummary(e.run);
      if (e.run.phase === 'failed') report(e.run.message, true);
      if (e.run.phase === 'done') report(e.run.message);
    } else if (e.type === 'session') {
      session.show(e.session);
      showSessionSummary(e.session);
    } else if (e.type === 'teleop') {
      teleop.show(e.teleop);
    } else if (e.type === 'projector') {
      session.showProjector(e.projector);
    } else if (e.type === 'rollouts-changed') {
      rollouts.reload().catch((err: Error) => report(err.message, true));
      compare.reload().catch((err: Error) => report(err.message, true));
    }
  });

  document.addEventListener('keydown', (e) => {
    const typing =
      e.target instanceof HTMLInputElement ||
      e.target instanceof HTMLSelectElement ||
      e.target instanceof HTMLTextAreaElement;
    const action = actionForKey({
      key: e.key,
      typing,
      modifier: e.ctrlKey || e.metaKey || e.altKey,
      inSession: currentView === 'session',
      inTeleop: currentView === 'teleop',
    });
    if (action === null) return;
    // Enter on a focused button presses that button: the browser does it, not the session key too.
    if (
      e.target instanceof HTMLButtonElement &&
      (e.key === 'Enter' || e.key === ' ') &&
      typeof action === 'object' &&
      ('session' in action || 'teleop' in action)
    )
      return;
    e.preventDefault();
    if (typeof action === 'object' && 'session' in action) {
      session.key(action.session);
      return;
    }
    if (typeof action === 'object' && 'teleop' in action) {
      if (!teleop.key(action.teleop) && e.key.toLowerCase() === 'd') command('damp');
      return;
    }
    if (action === 'estop') command('estop');
    else if (action === 'stop-rollout') stopRollout();
    else if (action === 'hold') command('hold');
    else if (action === 'damp') command('damp');
    else if (action === 'run') {
      showView('rollouts');
      rollouts.startRun();
    } else showView(VIEWS[action.view - 1]);
  });
}

main();
