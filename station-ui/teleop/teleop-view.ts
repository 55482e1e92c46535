/**
 * The Teleop view: start `tandem teleop record` on the station's rig with the station config's
 * leader (or, on an emulated rig, an emulated one),
 * a stored layout on the table if asked, watch the follower's joints live, drive the takes with
 * the same buttons as its keys — next, discard and re-record, sync, stop — see every take with its
 * cameras' dropped frames, and carry a stopped session on (`--resume`) from the page.
 */
import type {
  LayoutSetSummary,
  RigStatus,
  StationInfo,
  TeleopControlName,
  TeleopLeaderName,
  TeleopResumable,
  TeleopView as TeleopState,
} from '../../src/server/api-types.js';
import { TASK_IDS } from '../../src/tasks/types.js';
import { api } from '../api.js';
import { clear, h } from '../dom.js';

export interface TeleopViewHooks {
  report(message: string, error?: boolean): void;
}

const JOINTS = ['joint 1', 'joint 2', 'joint 3', 'joint 4', 'joint 5', 'joint 6', 'gripper'];
const deg = (rad: number): string => `${((rad * 180) / Math.PI).toFixed(1)}°`;

export class TeleopView {
  private readonly form: HTMLFormElement;
  private readonly live = h('div', { class: 'panel teleop-live', id: 'teleop-live' });
  private readonly arms = h('div', { class: 'panel', id: 'teleop-arms' });
  private readonly takes = h('div', { class: 'panel', id: 'teleop-takes' });
  private readonly taskInput = h('input', {
    id: 'teleop-task',
    list: 'teleop-tasks',
    autocomplete: 'off',
    value: 'bottles-in-the-bin',
  });
  private readonly episodesInput = h('input', { id: 'teleop-episodes', type: 'number', min: 1, value: 10 });
  private readonly secondsInput = h('input', { id: 'teleop-seconds', type: 'number', min: 0.5, step: 0.5, value: 20 });
  private readonly resetInput = h('input', { id: 'teleop-reset', type: 'number', min: 0, value: 10 });
  private readonly camerasSelect = h(
    'select',
    { id: 'teleop-cameras' },
    h('option', { value: 'none' }, 'none'),
    h('option', { value: 'cell' }, "the emulated cell's three"),
    h('option', { value: 'testsrc:1' }, 'one test pattern'),
    h('option', { value: 'testsrc:3' }, 'three test patterns'),
  );
  private readonly leaderSelect = h('select', { id: 'teleop-leader' });
  private readonly leaderHint = h('div', { class: 'hint', id: 'teleop-leader-hint' });
  private readonly camerasHint = h('div', { class: 'hint', id: 'teleop-cameras-hint', hidden: true });
  private readonly startBtn = h(
    'button',
    { class: 'btn primary big-btn', type: 'submit', id: 'teleop-start' },
    'Start recording',
  );
  private readonly setSelect = h(
    'select',
    { id: 'teleop-layout-set' },
    h('option', { value: '' }, "the cell's default table"),
  );
  private readonly tableHint = h(
    'div',
    { class: 'hint', id: 'teleop-table-hint' },
    "a stored layout set's layout on the emulated cell's table, recorded with every take",
  );
  /** What "no layout" means here: the emulated cell's own table, or (real arms) whatever the operator set out. */
  private noLayoutWords = "the cell's default table";
  private readonly layoutInput = h('input', { id: 'teleop-layout', type: 'number', min: 0, value: 0, disabled: true });
  private readonly resumePanel = h('div', { class: 'panel', id: 'teleop-resume', hidden: true });
  private sets: LayoutSetSummary[] = [];
  private resumable: TeleopResumable | null = null;
  private state: TeleopState | null = null;
  private tick: ReturnType<typeof setInterval> | undefined;
  private lastRig: RigStatus | undefined;

  constructor(
    root: HTMLElement,
    private readonly hooks: TeleopViewHooks,
  ) {
    const start = this.startBtn;
    this.form = h(
      'form',
      { class: 'run', id: 'teleop-form' },
      h('label', { for: 'teleop-task' }, 'Task'),
      this.taskInput,
      h('div', { class: 'hint' }, 'a task id, or the prompt itself ("put the cup on the plate")'),
      h('label', { for: 'teleop-episodes' }, 'Episodes'),
      this.episodesInput,
      h('label', { for: 'teleop-seconds' }, 'Take s'),
      this.secondsInput,
      h('label', { for: 'teleop-reset' }, 'Reset s'),
      this.resetInput,
      h('label', { for: 'teleop-cameras' }, 'Cameras'),
      this.camerasSelect,
      this.camerasHint,
      h('label', { for: 'teleop-leader' }, 'Leader'),
      this.leaderSelect,
      this.leaderHint,
      h('label', { for: 'teleop-layout-set' }, 'Table'),
      this.setSelect,
      h('label', { for: 'teleop-layout' }, 'Layout'),
      this.layoutInput,
      this.tableHint,
      h('span'),
      h('div', { class: 'actions' }, start),
    );
    this.setSelect.onchange = () => {
      const set = this.sets.find((x) => x.sha256 === this.setSelect.value);
      this.layoutInput.disabled = !set;
      this.layoutInput.max = String(set ? set.layoutCount - 1 : 0);
      // The set's own task: a layout is drawn for one task.
      if (set) this.taskInput.value = set.task;
    };
    this.form.onsubmit = (e) => {
      e.preventDefault();
      this.hooks.report('Starting: the rig comes up and the follower ramps to the leader…');
      const layoutSet = this.setSelect.value;
      api
        .startTeleop({
          task: this.taskInput.value,
          episodes: Number(this.episodesInput.value),
          seconds: Number(this.secondsInput.value),
          resetSeconds: Number(this.resetInput.value),
          cameras: this.camerasSelect.value,
          leader: this.leaderSelect.value as TeleopLeaderName,
          ...(layoutSet ? { layoutSet, layout: Number(this.layoutInput.value) } : {}),
        })
        .then(
          (v) => {
            this.hooks.report(`Teleop session ${v.sessionId ?? ''} is recording.`);
            this.show(v);
          },
          (err: Error) => this.hooks.report(err.message, true),
        );
    };
    root.append(
      h(
        'div',
        { class: 'grid session-grid' },
        // The takes sit right under the recording (what the operator checks after a stop), the plan form last.
        h(
          'div',
          {},
          this.live,
          this.resumePanel,
          this.takes,
          h(
            'div',
            { class: 'panel', id: 'teleop-plan' },
            h('h2', {}, 'Record teleop episodes'),
            this.form,
            h('datalist', { id: 'teleop-tasks' }, ...TASK_IDS.map((t) => h('option', { value: t }))),
          ),
        ),
        h('div', {}, this.arms),
      ),
    );
    this.show(null);
  }

  /**
   * What this station offers: its config's leader (on real arms the only one; the script-moved
   * emulated leaders only on an emulated rig) and, when its config names cameras, those cameras
   * in place of the page's choice.
   */
  setInfo(info: StationInfo): void {
    const keep = this.leaderSelect.value;
    clear(this.leaderSelect);
    for (const l of info.teleop.leaders) this.leaderSelect.append(h('option', { value: l.value }, l.words));
    if (info.teleop.leaders.some((l) => l.value === keep)) this.leaderSelect.value = keep;
    const none = info.teleop.leaders.length === 0;
    this.leaderSelect.disabled = none;
    this.startBtn.disabled = none;
    this.leaderHint.textContent = none
      ? `This ${info.rigType} station has no leader to record with: name one in the station config ('leader', docs/station-config.md) and restart the station with --station-config FILE.`
      : info.teleop.leaders[0].value === 'station'
        ? "the leader the station config names; move it by hand, its handle's buttons work as the keys"
        : 'moved by a script: for rehearsing on the emulated rig';
    // Real arms have no emulated table: a layout is what the operator set out, recorded with each take.
    const cell = info.teleop.ownTable;
    this.noLayoutWords = cell ? "the cell's default table" : 'none recorded';
    if (this.setSelect.options[0]?.value === '') this.setSelect.options[0].textContent = this.noLayoutWords;
    this.tableHint.textContent = cell
      ? "a stored layout set's layout on the emulated cell's table, recorded with every take"
      : "the stored layout set's layout you set out on the table, recorded with every take";
    this.camerasSelect.disabled = info.teleop.cameras !== null;
    this.camerasSelect.hidden = info.teleop.cameras !== null;
    this.camerasHint.hidden = info.teleop.cameras === null;
    this.camerasHint.textContent =
      info.teleop.cameras === null ? '' : `the station config's: ${info.teleop.cameras} (every take records them)`;
  }

  /** The stored layout sets for the Table choice and the session a Resume would carry on. */
  async reload(): Promise<void> {
    const [sets, resumable] = await Promise.all([api.layoutSets(), api.teleopResumable()]);
    this.sets = sets;
    const keep = this.setSelect.value;
    clear(this.setSelect);
    this.setSelect.append(h('option', { value: '' }, this.noLayoutWords));
    for (const x of sets)
      this.setSelect.append(
        h(
          'option',
          { value: x.sha256 },
          `${x.task} v${x.version} · ${x.layoutCount} layouts · tiers ${x.tiers.join(',')} · ${x.sha256.slice(0, 10)}`,
        ),
      );
    this.setSelect.value = sets.some((x) => x.sha256 === keep) ? keep : '';
    this.layoutInput.disabled = this.setSelect.value === '';
    this.resumable = resumable;
    this.drawResume();
  }

  show(s: TeleopState | null): void {
    if (s && this.state && s.seq < this.state.seq && s.sessionId === this.state.sessionId) return;
    const was = this.state?.phase;
    this.state = s;
    const working = s !== null && ['starting', 'engaging', 'take', 'reset'].includes(s.phase);
    (document.getElementById('teleop-plan') ?? this.form).hidden = working;
    // A recording just ended (or the page just learnt of one): what can be resumed has changed.
    if (s && !working && was !== s.phase) this.reload().catch((e: Error) => this.hooks.report(e.message, true));
    // The bottom line said "… is recording." since Start or Resume: say how it ended instead.
    if (s && !working && was !== undefined && was !== s.phase) this.hooks.report(endedLine(s), s.phase === 'failed');
    this.drawResume();
    this.drawLive();
    this.drawTakes();
    clearInterval(this.tick);
    if (s && (s.phase === 'take' || s.phase === 'reset')) this.tick = setInterval(() => this.drawLive(), 250);
  }

  /** The follower's joints, live from the rig stream (drawn only while the page is shown). */
  showRig(rig: RigStatus): void {
    this.lastRig = rig;
    clear(this.arms);
    this.arms.append(h('h2', {}, 'Follower arms, live'));
    const q = rig.position;
    if (q.length < 14) {
      this.arms.append(h('p', { class: 'muted' }, rig.note ?? 'No joint state yet.'));
      return;
    }
    for (const [side, off] of [
      ['left', 0],
      ['right', 7],
    ] as const) {
      const rows = JOINTS.map((j, i) => {
        // A joint no motor has reported yet (a rig not configured) arrives as null — JSON has no
        // NaN — and is shown as unknown, not as 0.
        const raw: unknown = q[off + i];
        const v = typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
        const bar = h('div', { class: 'jbar-fill' });
        if (v === undefined) bar.style.display = 'none';
        // Joints over ±π, the gripper over 0..1 of its range: where the arm is at a glance.
        const frac =
          v === undefined
            ? 0
            : i === 6
              ? Math.max(0, Math.min(1, v))
              : Math.max(0, Math.min(1, (v + Math.PI) / (2 * Math.PI)));
        bar.style.left = `${(frac * 100).toFixed(1)}%`;
        const num = v === undefined ? '—' : i === 6 ? v.toFixed(2) : deg(v);
        return h(
          'div',
          { class: 'jrow', 'data-joint': `${side} ${j}` },
          h('span', { class: 'jname' }, j),
          h('div', { class: 'jbar' }, bar),
          h('span', { class: 'num' }, num),
        );
      });
      this.arms.append(h('h3', {}, `${side} arm`), ...rows);
    }
    this.arms.append(
      h('p', { class: 'muted' }, `mode ${rig.mode}${rig.use === 'rollout' ? ' · the recording has the rig' : ''}`),
    );
  }

  /** A take key (keys.ts) on this page; false when no recording runs (the key is then not the recording's). */
  key(action: TeleopControlName): boolean {
    if (!this.state || !['engaging', 'take', 'reset'].includes(this.state.phase)) return false;
    this.control(action);
    return true;
  }

  private control(action: TeleopControlName): void {
    api.teleopControl(action).then(
      (v) => this.show(v),
      (e: Error) => this.hooks.report(e.message, true),
    );
  }

  private drawLive(): void {
    clear(this.live);
    const s = this.state;
    this.live.hidden = s === null;
    if (!s) return;
    this.live.setAttribute('data-phase', s.phase);
    const left =
      s.phaseStartedAt && s.phaseSeconds !== null
        ? Math.max(0, s.phaseSeconds - (Date.now() - Date.parse(s.phaseStartedAt)) / 1000)
        : null;
    const ep = `episode ${Math.min(s.episodeIndex + 1, s.episodes)} of ${s.episodes}`;
    const headline: Record<string, string> = {
      starting: 'Starting — the rig comes up…',
      engaging: `Engaging sync for ${ep}`,
      take: `● Recording ${ep}`,
      reset: `Reset the scene — next take in ${left === null ? '' : Math.ceil(left)} s`,
      stopped: 'Stopped',
      done: `Done — ${s.kept} episode${s.kept === 1 ? '' : 's'} kept`,
      failed: 'The recording failed',
    };
    const table = s.layoutSet !== null ? ` · layout ${s.layout} of set ${s.layoutSet.slice(0, 10)}` : '';
    this.live.append(
      h(
        'div',
        { class: 'card-head' },
        h('div', { class: 'card-title', id: 'teleop-phase' }, headline[s.phase]),
        h(
          'div',
          { class: 'muted' },
          `session ${s.sessionId ?? '…'}${s.resumed ? ' (resumed)' : ''} · "${s.task}"${table} · ${s.kept} kept`,
        ),
      ),
    );
    if (s.phase === 'take' && left !== null) {
      const pct = Math.min(100, (100 * (s.phaseSeconds! - left)) / s.phaseSeconds!);
      const bar = h('div');
      bar.style.width = `${pct.toFixed(1)}%`;
      this.live.append(
        h('div', { class: 'progress rec' }, bar),
        h('div', {}, `${left.toFixed(0)} s left of ${s.phaseSeconds} s`),
      );
    }
    if (s.problem) this.live.append(h('div', { class: 'reason bad' }, s.problem));
    if (s.phase === 'stopped' && s.kept < s.episodes)
      this.live.append(
        h('p', { class: 'muted' }, `${s.kept} of ${s.episodes} kept (every take is kept); carry on with Resume below.`),
      );
    const btn = (id: string, text: string, key: string, action: TeleopControlName, cls = ''): HTMLElement => {
      const b = h('button', { class: `btn big-btn ${cls}`, type: 'button', id }, text, h('kbd', {}, key));
      b.onclick = () => this.control(action);
      return b;
    };
    if (['engaging', 'take', 'reset'].includes(s.phase)) {
      this.live.append(
        h(
          'div',
          { class: 'actions' },
          btn('teleop-next', s.phase === 'take' ? 'End take' : 'Start take now', 'Space', 'next', 'primary'),
          btn('teleop-discard', s.phase === 'take' ? 'Discard & re-record' : 'Discard last take', '←', 'discard'),
          btn('teleop-sync', 'Sync on / off', 'E', 'sync'),
          btn('teleop-quit', 'Stop recording', 'Q', 'quit'),
        ),
      );
    }
    this.live.append(h('ul', { class: 'lines', id: 'teleop-lines' }, ...s.lines.slice(-5).map((l) => h('li', {}, l))));
    if (this.lastRig) this.showRig(this.lastRig);
  }

  /** The stopped session `--resume` would carry on, with its settings and a button; hidden while recording. */
  private drawResume(): void {
    clear(this.resumePanel);
    const r = this.resumable;
    const working = this.state !== null && ['starting', 'engaging', 'take', 'reset'].includes(this.state.phase);
    this.resumePanel.hidden = r === null || working;
    if (!r || working) return;
    const episodes = h('input', {
      id: 'teleop-resume-episodes',
      type: 'number',
      min: r.kept + 1,
      value: Math.max(r.episodes, r.kept + 1),
    });
    const btn = h(
      'button',
      { class: 'btn primary big-btn', type: 'button', id: 'teleop-resume-btn' },
      `Resume session ${r.sessionId}`,
    );
    btn.onclick = () => {
      btn.disabled = true;
      this.hooks.report(`Resuming teleop session ${r.sessionId} at episode ${r.kept + 1}…`);
      api.resumeTeleop({ sessionId: r.sessionId, episodes: Number(episodes.value) }).then(
        (v) => {
          this.hooks.report(`Teleop session ${r.sessionId} is recording again from episode ${r.kept + 1}.`);
          this.resumable = null;
          this.show(v);
        },
        (e: Error) => {
          btn.disabled = false;
          this.hooks.report(e.message, true);
        },
      );
    };
    const table = r.layoutSet !== null ? `layout ${r.layout} of set ${r.layoutSet.slice(0, 10)}` : this.noLayoutWords;
    this.resumePanel.append(
      h('h2', {}, 'Carry on a stopped recording'),
      h(
        'p',
        { id: 'teleop-resume-what' },
        `Session ${r.sessionId}: ${r.kept} of ${r.episodes} episodes kept — "${r.task === 'teleop' ? r.prompt : r.task}", ${r.seconds} s takes, ${r.resetSeconds} s resets, ${r.leader}, cameras ${r.cameras}, ${table}.`,
      ),
    );
    if (r.blocked) {
      this.resumePanel.append(h('div', { class: 'reason bad' }, r.blocked));
      return;
    }
    const form = h(
      'form',
      { class: 'run' },
      h('label', { for: 'teleop-resume-episodes' }, 'Episodes'),
      episodes,
      h('div', { class: 'hint' }, 'in all, kept ones included: raise it to record more'),
      h('span'),
      h('div', { class: 'actions' }, btn),
    );
    form.onsubmit = (e) => {
      e.preventDefault(); // Enter in the field resumes, as the button does
      if (!btn.disabled) btn.click();
    };
    this.resumePanel.append(form);
  }

  private drawTakes(): void {
    clear(this.takes);
    const s = this.state;
    this.takes.hidden = s === null;
    if (!s) return;
    const body = h('tbody');
    for (const t of s.takes) {
      body.append(
        h(
          'tr',
          { 'data-take': t.id, 'data-state': t.state },
          h('td', { class: 'num' }, String(t.episodeIndex + 1)),
          h(
            'td',
            {},
            h(
              'span',
              { class: `pill ${t.state === 'kept' ? 'ok' : t.state === 'discarded' ? 'idle' : 'warn'}` },
              t.state,
            ),
          ),
          h(
            'td',
            { class: 'num' },
            t.droppedFrames === null ? (s.cameras === 'none' ? 'no cameras' : '—') : String(t.droppedFrames),
          ),
          h('td', { class: 'num' }, t.framesReceived === null ? '—' : String(t.framesReceived)),
          h('td', { class: 'words' }, t.marks.length ? t.marks.join('; ') : (t.discardReason ?? '')),
          h('td', { class: 'words mono' }, t.file.split('/').slice(-2).join('/')),
        ),
      );
    }
    if (s.takes.length === 0) body.append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No takes yet.')));
    this.takes.append(
      h('h2', {}, 'Takes'),
      h(
        'table',
        { id: 'teleop-take-table' },
        h(
          'thead',
          {},
          h('tr', {}, ...['episode', 'state', 'dropped frames', 'frames', 'marks', 'file'].map((x) => h('th', {}, x))),
        ),
        body,
      ),
    );
  }
}

/** The bottom line once a recording has ended: how, and what was kept. */
function endedLine(s: TeleopState): string {
  const session = `Teleop session ${s.sessionId ?? ''}`;
  const kept = `${s.kept} of ${s.episodes} episode${s.episodes === 1 ? '' : 's'} kept`;
  if (s.phase === 'done') return `${session} is done: ${kept}.`;
  if (s.phase === 'stopped') return `${session} stopped: ${kept}; Resume carries on at episode ${s.kept + 1}.`;
  return `${session} failed: ${s.problem ?? 'see the log above'} (${kept}).`;
}
