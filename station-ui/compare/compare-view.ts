/**
 * The Compare view: for a policy and a layout set, real vs sim task progress side by side — per
 * tier (mean over layouts with a 95% layout-bootstrap interval) and per layout — and the chosen
 * layout in 3D. Numbers come from the station API (src/server/compare-view.ts); nothing is
 * computed here but the drawing.
 */
import type { CompareChoice, CompareSide, CompareTierSide, CompareView as CompareData, RigStatus } from '../../src/server/api-types.js';
import { api } from '../api.js';
import { clear, h } from '../dom.js';
import { Table3d } from './table-3d.js';
import { ReplayPanel } from './replay-panel.js';

export interface CompareViewHooks {
  report(message: string, error?: boolean): void;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** A progress bar with its number beside it: the length and the figure say the same thing. */
function bar(value: number | null, which: 'real' | 'sim', label: string): HTMLElement {
  const track = h('span', { class: `bar ${which}` });
  const fill = h('span');
  fill.style.width = value === null ? '0' : `${(value * 100).toFixed(1)}%`;
  track.append(fill);
  return h('span', { class: 'barcell' }, track, h('span', { class: 'barnum' }, value === null ? '—' : value.toFixed(2)), label ? h('span', { class: 'muted small' }, label) : null);
}

function sideCell(s: CompareSide, which: 'real' | 'sim'): HTMLTableCellElement {
  const label = s.rollouts === 0 ? 'no rollouts' : `${s.counted} of ${s.rollouts}${s.notCounted ? ` (${s.notCounted} not counted)` : ''}`;
  return h('td', { class: 'words' }, bar(s.meanProgress, which, label));
}

function tierCell(t: CompareTierSide | null, which: 'real' | 'sim'): HTMLTableCellElement {
  if (!t) return h('td', { class: 'muted' }, 'no scored rollouts');
  // One layout gives a zero-width interval that means nothing: say so instead of "0%–0%".
  const interval = t.layouts > 1 ? `${pct(t.lower)}–${pct(t.upper)}` : 'no interval from one layout';
  return h('td', { class: 'words' }, bar(t.meanProgress, which, `${interval} · ${t.layouts} layout${t.layouts === 1 ? '' : 's'}, ${t.rollouts} rollout${t.rollouts === 1 ? '' : 's'}`));
}

function gapText(g: number | null): string {
  if (g === null) return '—';
  return `${g >= 0 ? '+' : '−'}${Math.abs(g).toFixed(2)}`;
}

export class CompareView {
  private readonly picker = h('select', { id: 'compare-choice' });
  private readonly tiers = h('tbody');
  private readonly layouts = h('tbody');
  private readonly heading = h('p', { class: 'muted', id: 'compare-heading' }, 'Loading…');
  private readonly scene = new Table3d();
  private readonly sceneNote = h('p', { class: 'muted', id: 'compare-3d-note' }, 'Pick a layout in the table to see it on the table in 3D.');
  private readonly replay = new ReplayPanel(this.scene);
  private choices: CompareChoice[] = [];
  private data: CompareData | null = null;
  private selectedLayout: number | null = null;
  private urdfLoaded = false;
  private shown = false;

  constructor(
    root: HTMLElement,
    private readonly hooks: CompareViewHooks,
  ) {
    this.picker.onchange = () => void this.load().catch((e: Error) => this.hooks.report(e.message, true));
    const tierTable = h('table', { id: 'compare-tiers' }, h('thead', {}, h('tr', {}, ...['tier', 'real (mean, 95% interval)', 'sim (mean, 95% interval)', 'real − sim'].map((t) => h('th', {}, t)))), this.tiers);
    const layoutTable = h('table', { id: 'compare-layouts' }, h('thead', {}, h('tr', {}, ...['layout', 'tier', 'real', 'sim', 'real − sim'].map((t) => h('th', {}, t)))), this.layouts);
    root.append(
      h(
        'div',
        { class: 'grid wide-right' },
        h(
          'div',
          {},
          h('div', { class: 'panel' }, h('h2', {}, 'Real vs sim'), h('div', { class: 'pickrow' }, h('label', { for: 'compare-choice' }, 'Policy on layout set'), this.picker), this.heading),
          h('div', { class: 'panel' }, h('h2', {}, 'Per tier'), tierTable),
          h('div', { class: 'panel' }, h('h2', {}, 'Per layout'), layoutTable),
        ),
        h('div', {}, h('div', { class: 'panel', id: 'compare-3d' }, h('h2', {}, 'Layout in 3D'), this.scene.canvas, this.sceneNote), this.replay.root),
      ),
    );
  }

  /** The view came on screen: load (or refresh) its numbers and start its 3D picture. */
  async show(): Promise<void> {
    this.shown = true;
    if (this.scene.start()) {
      if (!this.urdfLoaded) {
        this.scene.setRobot(await api.rigUrdf());
        this.urdfLoaded = true;
      }
      this.scene.redraw();
    } else this.sceneNote.textContent = this.scene.problem;
    await this.reload();
  }

  hide(): void {
    this.shown = false;
  }

  /** New rollouts stored: refresh the picker and the numbers (when on screen). */
  async reload(): Promise<void> {
    if (!this.shown) return;
    this.choices = await api.compareChoices();
    const keep = this.picker.value;
    clear(this.picker);
    for (const c of this.choices) {
      this.picker.append(h('option', { value: `${c.policy.id}:${c.layoutSet}` }, `${c.policy.name} · ${c.task ?? '?'} · set ${c.layoutSet.slice(0, 10)} · ${c.realRollouts} real, ${c.simRollouts} sim`));
    }
    if (this.choices.length === 0) {
      this.picker.append(h('option', { value: '' }, 'No rollouts stored yet'));
      this.heading.textContent = "Nothing to compare yet: run rollouts on the rig (Rollouts page) and in the sim ('tandem sim sweep --layouts … --policy …') on the same layout set.";
      return;
    }
    if (keep && Array.from(this.picker.options).some((o) => o.value === keep)) this.picker.value = keep;
    await this.load();
  }

  showRig(rig: RigStatus): void {
    if (this.shown) this.scene.showArms(rig);
  }

  private async load(): Promise<void> {
    const [policy, layoutSet] = this.picker.value.split(':');
    if (!policy || !layoutSet) return;
    const d = await api.compare(Number(policy), layoutSet);
    this.data = d;
    this.heading.textContent = `${d.policy.name}${d.policy.spec && d.policy.spec !== d.policy.name ? ` (${d.policy.spec})` : ''} on ${d.layoutSet.task}, set ${d.layoutSet.sha256.slice(0, 12)} (${d.layoutSet.layoutCount} layout${d.layoutSet.layoutCount === 1 ? '' : 's'}). Task progress 0–1; a rollout counts when it is valid and scored.${d.realOnEmulatedCell ? ' Real here is the emulated cell: a rehearsal, not a result.' : ''}`;
    clear(this.tiers);
    for (const t of d.tiers) {
      const gap = t.real && t.sim ? t.real.meanProgress - t.sim.meanProgress : null;
      this.tiers.append(h('tr', { class: t.tier === 'all' ? 'total' : undefined, 'data-tier': String(t.tier) }, h('td', {}, t.tier === 'all' ? 'all tiers' : `tier ${t.tier}`), tierCell(t.real, 'real'), tierCell(t.sim, 'sim'), h('td', { class: 'num' }, gapText(gap))));
    }
    clear(this.layouts);
    for (const l of d.layouts) {
      const row = h('tr', { class: `clickable${l.layout === this.selectedLayout ? ' selected' : ''}`, 'data-layout': l.layout, tabindex: 0 }, h('td', { class: 'num' }, `#${l.layout}`), h('td', { class: 'num' }, String(l.tier)), sideCell(l.real, 'real'), sideCell(l.sim, 'sim'), h('td', { class: 'num' }, gapText(l.gap)));
      row.onclick = () => void this.pickLayout(l.layout);
      row.onkeydown = (e) => {
        if (e.key === 'Enter') void this.pickLayout(l.layout);
      };
      this.layouts.append(row);
    }
    const first = d.layouts.find((l) => l.real.rollouts + l.sim.rollouts > 0) ?? d.layouts[0];
    if (first && (this.selectedLayout === null || !d.layouts.some((l) => l.layout === this.selectedLayout))) await this.pickLayout(first.layout);
    else if (this.selectedLayout !== null) await this.pickLayout(this.selectedLayout);
  }

  private async pickLayout(index: number): Promise<void> {
    if (!this.data) return;
    this.selectedLayout = index;
    this.layouts.querySelectorAll('tr').forEach((tr) => tr.classList.toggle('selected', tr.getAttribute('data-layout') === String(index)));
    const view = await api.layout(this.data.layoutSet.sha256, index);
    const row = this.data.layouts.find((l) => l.layout === index);
    this.sceneNote.textContent = `Layout #${index}, tier ${view.layout.tier}: ${view.layout.objects.length} object${view.layout.objects.length === 1 ? '' : 's'}${view.layout.fixtures.length ? `, ${view.layout.fixtures.map((f) => f.kind).join(', ')}` : ''}. ${row ? `Real ${row.real.meanProgress === null ? '—' : row.real.meanProgress.toFixed(2)}, sim ${row.sim.meanProgress === null ? '—' : row.sim.meanProgress.toFixed(2)}.` : ''} Arms as the rig is now.`;
    if (!this.scene.problem) this.scene.showLayout(view);
    try {
      this.replay.show(await api.replay(this.data.policy.id, this.data.layoutSet.sha256, index));
      this.sceneNote.textContent = this.sceneNote.textContent!.replace('Arms as the rig is now.', 'Arms as recorded (replay below).');
    } catch (e) {
      this.replay.showNote((e as Error).message);
    }
  }
}
