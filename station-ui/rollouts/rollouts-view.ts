/**
 * The Rollouts view: stored rollouts (newest first) with their scores, one rollout's detail, and
 * running one rollout on the rig — its progress and score as it happens.
 */
import type {
  LayoutSetSummary,
  RolloutDetail,
  RolloutRun,
  RolloutSummary,
  StationInfo,
} from '../../src/server/api-types.js';
import { TASK_IDS } from '../../src/tasks/types.js';
import { api } from '../api.js';
import { agoEl, clear, fixed, h, stamp } from '../dom.js';
import { splitReason } from '../words.js';

export interface RolloutsViewHooks {
  report(message: string, error?: boolean): void;
  /** Stop the running rollout (S): the rig holds, then damps. */
  stop(): void;
}

function statusPill(r: { status: string; progress: number | null }): HTMLElement {
  if (r.status !== 'valid') return h('span', { class: 'pill bad' }, r.status);
  return r.progress === null
    ? h('span', { class: 'pill warn' }, 'awaiting score')
    : h('span', { class: 'pill ok' }, 'valid');
}

/** A message that may hold many faults: its headline and one line per distinct fault. */
function reasonBlock(text: string, bad: boolean, id?: string): HTMLElement {
  const { head, lines } = splitReason(text);
  const box = h('div', { class: `reason${bad ? ' bad' : ''}`, id });
  if (head) box.append(h('div', { class: 'reason-head' }, `${head}:`));
  if (lines.length === 1) box.append(h('div', {}, lines[0]));
  else box.append(h('ul', {}, ...lines.map((l) => h('li', {}, l))));
  return box;
}

export class RolloutsView {
  private readonly list = h('tbody');
  private readonly detail = h(
    'div',
    { class: 'panel', id: 'rollout-detail' },
    h('h2', {}, 'Rollout'),
    h('p', { class: 'muted' }, 'Pick a rollout in the list to see it here.'),
  );
  private readonly setSelect = h('select', { id: 'run-layout-set', name: 'layoutSet' });
  private readonly layoutInput = h('input', { id: 'run-layout', name: 'layout', type: 'number', min: 0, value: 0 });
  private readonly policyInput = h('input', {
    id: 'run-policy',
    name: 'policy',
    list: 'policy-specs',
    autocomplete: 'off',
  });
  private readonly secondsInput = h('input', {
    id: 'run-seconds',
    name: 'seconds',
    type: 'number',
    min: 0.1,
    step: 0.1,
  });
  private readonly seedInput = h('input', { id: 'run-seed', name: 'seed', type: 'number', min: 0, value: 0 });
  private readonly runBtn = h(
    'button',
    { class: 'btn primary', id: 'run-rollout', type: 'submit' },
    'Run on the rig',
    h('kbd', {}, 'R'),
  );
  private readonly specs = h('datalist', { id: 'policy-specs' });
  private readonly runPanel = h('div', { class: 'panel', id: 'run-panel' });
  private sets: LayoutSetSummary[] = [];
  private selected: number | null = null;
  private running = false;

  constructor(
    root: HTMLElement,
    private readonly hooks: RolloutsViewHooks,
  ) {
    const form = h(
      'form',
      { class: 'run', id: 'run-form' },
      h('label', { for: 'run-layout-set' }, 'Layout set'),
      this.setSelect,
      h('label', { for: 'run-layout' }, 'Layout'),
      this.layoutInput,
      h('label', { for: 'run-policy' }, 'Policy'),
      this.policyInput,
      h('div', { class: 'hint' }, 'code:NAME, onnx:path/to/model.onnx or ws://host:port'),
      h('label', { for: 'run-seconds' }, 'Seconds'),
      this.secondsInput,
      h('label', { for: 'run-seed' }, 'Seed'),
      this.seedInput,
      h('span'),
      h('div', { class: 'actions' }, this.runBtn),
    );
    form.onsubmit = (e) => {
      e.preventDefault();
      this.startRun();
    };
    this.setSelect.onchange = () => this.syncLayoutLimits();
    const table = h(
      'table',
      { id: 'rollout-table' },
      h(
        'thead',
        {},
        h('tr', {}, ...['#', 'when', 'policy', 'layout', 'status', 'progress', 'scored by'].map((t) => h('th', {}, t))),
      ),
      this.list,
    );
    root.append(
      h(
        'div',
        { class: 'grid' },
        h('div', {}, h('div', { class: 'panel' }, h('h2', {}, 'Stored rollouts'), table), this.detail),
        h(
          'div',
          {},
          h('div', { class: 'panel' }, h('h2', {}, 'Run a rollout'), form, this.specs),
          this.runPanel,
          this.samplePanel(),
        ),
      ),
    );
    this.showRun(null);
  }

  setInfo(info: StationInfo): void {
    clear(this.specs);
    for (const s of info.policySpecs) if (!s.includes(' ')) this.specs.append(h('option', { value: s }));
    if (!this.policyInput.value) this.policyInput.value = info.defaultPolicy;
  }

  async reload(): Promise<void> {
    const [sets, rollouts] = await Promise.all([api.layoutSets(), api.rollouts()]);
    this.sets = sets;
    const keep = this.setSelect.value;
    clear(this.setSelect);
    for (const s of sets)
      this.setSelect.append(
        h(
          'option',
          { value: s.sha256 },
          `${s.task} v${s.version} · ${s.layoutCount} layouts · tiers ${s.tiers.join(',')} · ${s.sha256.slice(0, 10)}`,
        ),
      );
    if (sets.length === 0) this.setSelect.append(h('option', { value: '' }, 'No layout sets yet: sample one below'));
    if (keep && sets.some((s) => s.sha256 === keep)) this.setSelect.value = keep;
    this.syncLayoutLimits();
    this.showList(rollouts);
  }

  private syncLayoutLimits(): void {
    const set = this.sets.find((s) => s.sha256 === this.setSelect.value);
    this.layoutInput.max = String(set ? set.layoutCount - 1 : 0);
    if (set && !this.secondsInput.value) this.secondsInput.value = String(set.episodeSeconds);
    this.runBtn.disabled = !set || this.running;
  }

  private showList(rollouts: RolloutSummary[]): void {
    clear(this.list);
    if (rollouts.length === 0)
      this.list.append(h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No rollouts stored yet.')));
    for (const r of rollouts) {
      const row = h(
        'tr',
        { class: `clickable${r.id === this.selected ? ' selected' : ''}`, 'data-rollout': r.id, tabindex: 0 },
        h('td', { class: 'num' }, String(r.id)),
        h('td', {}, agoEl(r.startedAt)),
        h('td', {}, r.policy.name),
        h('td', { title: r.task ?? '' }, `#${r.layoutIndex} · tier ${r.tier}`),
        h(
          'td',
          {},
          statusPill(r),
          r.emulatedCell
            ? h('span', { class: 'pill idle', title: 'Ran on the emulated cell: a rehearsal, not a result' }, 'cell')
            : null,
        ),
        h('td', { class: 'num' }, r.progress === null ? '—' : r.progress.toFixed(2)),
        // The 'cell' pill already says where it ran.
        h('td', { class: 'words' }, r.scoredBy?.replace(' (emulated cell)', '') ?? '—'),
      );
      row.onclick = () => void this.select(r.id);
      row.onkeydown = (e) => {
        if (e.key === 'Enter') void this.select(r.id);
      };
      this.list.append(row);
    }
  }

  async select(id: number): Promise<void> {
    this.selected = id;
    this.list
      .querySelectorAll('tr')
      .forEach((tr) => tr.classList.toggle('selected', tr.getAttribute('data-rollout') === String(id)));
    const r = await api.rollout(id);
    this.showDetail(r);
  }

  private showDetail(r: RolloutDetail): void {
    clear(this.detail);
    const counts = r.counts
      ? Object.entries(r.counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : '—';
    this.detail.append(
      h('h2', {}, `Rollout ${r.id}`),
      h(
        'dl',
        { class: 'kv' },
        h('dt', {}, 'policy'),
        h(
          'dd',
          {},
          r.policy.spec && r.policy.spec !== r.policy.name ? `${r.policy.name} (${r.policy.spec})` : r.policy.name,
        ),
        h('dt', {}, 'layout'),
        h(
          'dd',
          {},
          `${r.task ?? ''} #${r.layoutIndex}, tier ${r.tier} of set `,
          h('span', { class: 'mono' }, r.layoutSetSha256.slice(0, 16)),
        ),
        h('dt', {}, 'status'),
        h('dd', {}, statusPill(r), ` ${r.outcome ?? ''}`),
        ...(r.statusReason ? [h('dt', {}, 'why'), h('dd', {}, reasonBlock(r.statusReason, true))] : []),
        ...(r.policyError ? [h('dt', {}, 'policy error'), h('dd', {}, r.policyError)] : []),
        h('dt', {}, 'task progress'),
        h('dd', {}, r.progress === null ? 'awaiting an operator score' : `${r.progress.toFixed(2)} (${counts})`),
        h('dt', {}, 'scored by'),
        h('dd', {}, ...(r.score ? [`${r.score.operator ?? 'an operator'}, `, agoEl(r.score.enteredAt)] : ['—'])),
        h('dt', {}, 'ran'),
        h(
          'dd',
          {},
          `${stamp(r.startedAt)}, ${fixed(r.durationS, 1)} s wall for a ${r.episodeSeconds} s episode at ${r.controlHz} Hz`,
        ),
        h('dt', {}, 'where'),
        h(
          'dd',
          {},
          r.emulatedCell ? 'the emulated cell — a rehearsal, not a result' : r.kind === 'real' ? 'the rig' : 'the sim',
        ),
        h('dt', {}, 'recording'),
        h(
          'dd',
          {},
          r.episodeFile
            ? h('code', { title: 'Open it with tandem record inspect, Foxglove or ros2 bag' }, r.episodeFile)
            : 'none',
        ),
        ...(r.rehearsal ? [h('dt', {}, 'counts as'), h('dd', {}, 'a rehearsal, not a result')] : []),
      ),
    );
    // A single rig rollout is scored here; a session's rollouts are scored in their session.
    if (r.kind === 'real' && r.status === 'valid' && r.sessionId === null) this.detail.append(this.scoreForm(r));
  }

  /** The operator's score of a rig rollout: how many objects ended in the region (or upright); a re-score needs a reason. */
  private scoreForm(r: RolloutDetail): HTMLElement {
    const count = h('input', { id: 'score-count', name: 'count', type: 'number', min: 0, required: true });
    const reason = h('input', {
      id: 'score-reason',
      name: 'reason',
      type: 'text',
      placeholder: r.score ? 'why it is scored again (required)' : 'only for a re-score',
    });
    const form = h(
      'form',
      { class: 'run', id: 'score-form' },
      h('label', { for: 'score-count' }, r.task === 'mug-flipping' ? 'Mugs upright' : 'Objects in the bin'),
      count,
      h('label', { for: 'score-reason' }, 'Reason'),
      reason,
      h('button', { class: 'btn primary', id: 'score-rollout', type: 'submit' }, r.score ? 'Score again' : 'Score'),
    );
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      api
        .scoreRollout(r.id, {
          count: Number(count.value),
          ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
        })
        .then(
          (s) => {
            this.hooks.report(
              `Rollout ${r.id} ${s.rescored ? 're-scored' : 'scored'} ${s.progress.toFixed(2)}: ${s.summary}`,
            );
            void api.rollout(r.id).then((d) => this.showDetail(d));
          },
          (e: Error) => this.hooks.report(e.message, true),
        );
    });
    return form;
  }

  /** Runs the form's rollout (the R key). */
  startRun(): void {
    if (this.running || this.runBtn.disabled) return;
    const seconds = Number(this.secondsInput.value);
    this.running = true;
    this.runBtn.disabled = true;
    this.hooks.report('Starting the rollout…');
    api
      .run({
        policy: this.policyInput.value,
        layoutSet: this.setSelect.value,
        layout: Number(this.layoutInput.value),
        ...(this.secondsInput.value ? { seconds } : {}),
        seed: Number(this.seedInput.value || 0),
      })
      .then(
        (run) => this.showRun(run),
        (e: Error) => {
          this.running = false;
          this.syncLayoutLimits();
          this.hooks.report(e.message, true);
        },
      );
  }

  showRun(run: RolloutRun | null): void {
    clear(this.runPanel);
    this.runPanel.append(h('h2', {}, 'On the rig now'));
    if (!run) {
      this.runPanel.append(h('p', { class: 'muted' }, 'Nothing running.'));
      return;
    }
    const live = run.phase === 'starting' || run.phase === 'running' || run.phase === 'storing';
    this.running = live;
    this.syncLayoutLimits();
    const pct = run.totalSteps > 0 ? (100 * run.stepsDone) / run.totalSteps : 0;
    const bar = h('div');
    bar.style.width = `${pct.toFixed(1)}%`;
    this.runPanel.setAttribute('data-phase', run.phase);
    this.runPanel.append(
      h('div', { class: 'muted' }, `${run.policy} · layout ${run.layout} · ${run.seconds} s`),
      h(
        'div',
        {
          class: 'progress',
          role: 'progressbar',
          'aria-valuenow': Math.round(pct),
          'aria-valuemin': 0,
          'aria-valuemax': 100,
        },
        bar,
      ),
      h(
        'div',
        {},
        `${run.phase === 'done' ? (run.status === 'aborted' ? 'Stopped' : 'Done') : run.phase === 'failed' ? 'Failed' : run.phase === 'starting' ? 'Starting' : run.phase === 'storing' ? 'Settling' : 'Running'} — step ${run.stepsDone} of ${run.totalSteps}`,
      ),
    );
    if (live) {
      const stop = h(
        'button',
        {
          class: 'btn stop',
          id: 'stop-rollout',
          type: 'button',
          title: 'Stop this rollout: the rig holds its pose, then damps (S, or the middle foot pedal)',
        },
        'Stop rollout',
        h('kbd', {}, 'S'),
      );
      stop.onclick = () => this.hooks.stop();
      this.runPanel.append(h('div', { class: 'actions' }, stop));
    }
    if (run.phase === 'done') {
      this.runPanel.append(
        h(
          'div',
          { class: 'big', id: 'run-score' },
          run.progress === null
            ? run.status === 'valid'
              ? 'awaiting score'
              : String(run.status)
            : `progress ${run.progress.toFixed(2)}`,
        ),
      );
      if (run.scoreSummary) this.runPanel.append(h('div', {}, run.scoreSummary));
    }
    this.runPanel.append(
      reasonBlock(
        run.message,
        run.phase === 'failed' || (run.status !== null && run.status !== 'valid'),
        'run-message',
      ),
    );
  }

  private samplePanel(): HTMLElement {
    const task = h('select', { id: 'sample-task' }, ...TASK_IDS.map((t) => h('option', { value: t }, t)));
    const tiers = h('input', { id: 'sample-tiers', value: '1,2,3' });
    const perTier = h('input', { id: 'sample-per-tier', type: 'number', min: 1, max: 100, value: 2 });
    const seed = h('input', { id: 'sample-seed', type: 'number', min: 0, value: 0 });
    const btn = h('button', { class: 'btn', type: 'submit', id: 'sample-set' }, 'Sample into the store');
    const form = h(
      'form',
      { class: 'run' },
      h('label', { for: 'sample-task' }, 'Task'),
      task,
      h('label', { for: 'sample-tiers' }, 'Tiers'),
      tiers,
      h('label', { for: 'sample-per-tier' }, 'Per tier'),
      perTier,
      h('label', { for: 'sample-seed' }, 'Seed'),
      seed,
      h('span'),
      h('div', { class: 'actions' }, btn),
    );
    form.onsubmit = (e) => {
      e.preventDefault();
      api
        .sampleLayoutSet({
          task: task.value,
          tiers: tiers.value.split(',').map((t) => Number(t.trim())),
          perTier: Number(perTier.value),
          seed: Number(seed.value),
        })
        .then(
          async (s) => {
            this.hooks.report(`Layout set ${s.sha256.slice(0, 12)} (${s.layoutCount} layouts) is in the store.`);
            await this.reload();
            this.setSelect.value = s.sha256;
            this.syncLayoutLimits();
          },
          (err: Error) => this.hooks.report(err.message, true),
        );
    };
    return h('div', { class: 'panel' }, h('h2', {}, 'New layout set'), form);
  }
}
