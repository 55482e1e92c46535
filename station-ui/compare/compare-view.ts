/**
 * The Compare view: for policies on a layout set, real vs sim task progress side by side — per
 * tier (mean over the layouts both sides ran, with 95% layout-bootstrap intervals), per layout,
 * and across policies (Pearson r and MMRV with their intervals once three policies have paired
 * data) — and the chosen layout in 3D with its replay. The numbers are the paired report's
 * (GET /api/compare/report, the same as `tandem report --json`); nothing is computed here but the
 * drawing, and what the report refuses or leaves out is said in words.
 */
import type { LayoutPair, PolicyReport, ReportChoices } from '../../src/analysis/paired-report.js';
import type { TierSummary } from '../../src/analysis/tier-summary.js';
import type { CompareChoice, CompareReport, RigStatus } from '../../src/server/api-types.js';
import { api } from '../api.js';
import { clear, h } from '../dom.js';
import { Table3d } from './table-3d.js';
import { ReplayPanel } from './replay-panel.js';
import { CrossEnginePanel } from './cross-engine-panel.js';
import { CompareRefusal, fetchCompareReport, type CompareNarrowing } from './report-client.js';

export interface CompareViewHooks {
  report(message: string, error?: boolean): void;
}

const pct = (x: number): string => `${Math.round(x * 100)}%`;
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
const n2 = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(2);

/** A progress bar with its number beside it: the length and the figure say the same thing. */
function bar(value: number | null, which: 'real' | 'sim', label: string): HTMLElement {
  const track = h('span', { class: `bar ${which}` });
  const fill = h('span');
  fill.style.width = value === null ? '0' : `${(value * 100).toFixed(1)}%`;
  track.append(fill);
  return h(
    'span',
    { class: 'barcell' },
    track,
    h('span', { class: 'barnum' }, value === null ? '—' : value.toFixed(2)),
    label ? h('span', { class: 'muted small' }, label) : null,
  );
}

function tierCell(t: TierSummary | undefined, which: 'real' | 'sim'): HTMLTableCellElement {
  if (!t) return h('td', { class: 'muted' }, 'no scored rollouts');
  // One layout gives a zero-width interval that means nothing: say so instead of "0%–0%".
  const interval =
    t.layouts > 1 ? `${pct(t.progressInterval.lower)}–${pct(t.progressInterval.upper)}` : 'no interval from one layout';
  return h(
    'td',
    { class: 'words' },
    bar(t.meanProgress, which, `${interval} · ${plural(t.layouts, 'layout')}, ${plural(t.rollouts, 'rollout')}`),
  );
}

/** One side of one layout: the counted rollouts' mean, and how many of this side's rollouts count. */
function layoutCell(l: LayoutPair | undefined, which: 'real' | 'sim'): HTMLTableCellElement {
  const counted = l ? (which === 'real' ? l.realRolloutIds.length : l.simRolloutIds.length) : 0;
  const left = l ? l.notCounted.filter((n) => n.kind === which) : [];
  const total = counted + left.length;
  const label =
    total === 0 ? 'no rollouts' : `${counted} of ${total}${left.length ? ` (${left.length} not counted)` : ''}`;
  const cell = h('td', { class: 'words' }, bar(l ? (which === 'real' ? l.real : l.sim) : null, which, label));
  // Why each one is left out, on hover and for screen readers.
  if (left.length) cell.title = left.map((n) => `rollout ${n.id}: ${n.why}`).join('\n');
  return cell;
}

type NarrowField = keyof CompareNarrowing;
const NARROW_FIELDS: readonly { field: NarrowField; label: string; id: string }[] = [
  { field: 'simCalibration', label: 'Sim calibration', id: 'compare-sim-calibration' },
  { field: 'realCalibration', label: 'Real calibration', id: 'compare-real-calibration' },
  { field: 'episodeSeconds', label: 'Episode length', id: 'compare-episode-seconds' },
];
const shortSha = (v: string): string =>
  v === ''
    ? 'none'
    : v
        .split(',')
        .map((x) => `${x.slice(0, 12)}…`)
        .join(' + ');

/** The values one picker offers, in the report's words: what it is and how many rollouts ran with it. */
function narrowOptions(c: ReportChoices, field: NarrowField): { value: string; text: string }[] {
  if (field === 'episodeSeconds') {
    return c.episodeSeconds.map((e) => ({
      value: String(e.value),
      text: `${e.value} s episodes · ${[e.sim ? `${e.sim} sim` : '', e.real ? `${e.real} real` : ''].filter(Boolean).join(', ')}`,
    }));
  }
  const side = field === 'simCalibration' ? 'sim' : 'real';
  return (field === 'simCalibration' ? c.simCalibrations : c.realCalibrations).map((x) => ({
    value: x.value,
    text: `${shortSha(x.value)} · ${plural(x.rollouts, `${side} rollout`)}`,
  }));
}

/**
 * The episode length compared when several are stored and the operator has not picked one: the
 * one most rollouts ran (on a tie, the longer — short test rollouts are the usual odd ones out).
 */
export function commonEpisodeLength(
  lengths: ReportChoices['episodeSeconds'],
): ReportChoices['episodeSeconds'][number] | undefined {
  return [...lengths].sort((a, b) => b.sim + b.real - (a.sim + a.real) || b.value - a.value)[0];
}

const sideCounts = (e: ReportChoices['episodeSeconds'][number]): string =>
  [e.real ? `${e.real} real` : '', e.sim ? `${e.sim} sim` : ''].filter(Boolean).join(', ');

function gapText(g: number | null): string {
  if (g === null) return '—';
  return `${g >= 0 ? '+' : '−'}${Math.abs(g).toFixed(2)}`;
}

export class CompareView {
  private readonly setPicker = h('select', { id: 'compare-set' });
  private readonly policyBoxes = h('div', {
    id: 'compare-policies',
    class: 'pickrow',
    role: 'group',
    'aria-label': 'Policies in the comparison',
  });
  private readonly policyPicker = h('select', { id: 'compare-policy' });
  private readonly tiers = h('tbody');
  private readonly layouts = h('tbody');
  private readonly heading = h('p', { class: 'muted', id: 'compare-heading' }, 'Loading…');
  private readonly refusal = h('p', { id: 'compare-refusal', role: 'alert' });
  /** Which episode length is compared when several are stored, and what the others are, in words. */
  private readonly lengthNote = h('p', { id: 'compare-length-note', class: 'muted', hidden: true });
  /** Which calibration (per side) and episode length to compare, where several are stored. */
  private readonly narrowPickers = new Map<NarrowField, { wrap: HTMLElement; select: HTMLSelectElement }>();
  private readonly narrowRow = h('div', {
    id: 'compare-narrow',
    class: 'pickrow',
    role: 'group',
    'aria-label': 'Calibration and episode length compared',
  });
  /** The operator's picks, per layout set. */
  private readonly narrowed = new Map<string, CompareNarrowing>();
  private readonly across = h('div', { id: 'compare-correlation' });
  private readonly leftOut = h('div', { id: 'compare-left-out', class: 'small' });
  private readonly engines = new CrossEnginePanel();
  private readonly scene = new Table3d();
  private readonly sceneNote = h(
    'p',
    { class: 'muted', id: 'compare-3d-note' },
    'Pick a layout in the table to see it on the table in 3D.',
  );
  private readonly replay = new ReplayPanel(this.scene);
  private choices: CompareChoice[] = [];
  /** Policies the operator unticked, per layout set. */
  private readonly unticked = new Map<string, Set<number>>();
  private data: CompareReport | null = null;
  private selectedLayout: number | null = null;
  private urdfLoaded = false;
  private shown = false;

  constructor(
    root: HTMLElement,
    private readonly hooks: CompareViewHooks,
  ) {
    const failed = (e: Error): void => this.hooks.report(e.message, true);
    this.setPicker.onchange = () => {
      this.fillPolicies();
      void this.load().catch(failed);
    };
    this.policyPicker.onchange = () => void this.drawLayouts().catch(failed);
    this.refusal.hidden = true;
    this.narrowRow.style.flexWrap = 'wrap';
    this.narrowRow.style.marginTop = '0.5rem';
    for (const f of NARROW_FIELDS) {
      const select = h('select', { id: f.id });
      select.style.width = 'auto';
      const wrap = h('span', { class: 'pickrow' }, h('label', { for: f.id }, f.label), select);
      // Not the hidden attribute: the row's display: flex would override it.
      wrap.style.display = 'none';
      select.onchange = () => {
        const mine = this.narrowing();
        if (select.value === '') delete mine[f.field];
        else if (f.field === 'episodeSeconds') mine.episodeSeconds = Number(select.value);
        else mine[f.field] = select.value;
        void this.load().catch(failed);
      };
      this.narrowPickers.set(f.field, { wrap, select });
      this.narrowRow.append(wrap);
    }
    this.policyBoxes.style.flexWrap = 'wrap';
    this.policyBoxes.style.marginTop = '0.5rem';
    const tierTable = h(
      'table',
      { id: 'compare-tiers' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...[
            'policy',
            'tier',
            'real (mean, 95% interval)',
            'sim, same layouts',
            'sim, every layout',
            'real − sim',
          ].map((t) => h('th', {}, t)),
        ),
      ),
      this.tiers,
    );
    const layoutTable = h(
      'table',
      { id: 'compare-layouts' },
      h('thead', {}, h('tr', {}, ...['layout', 'tier', 'real', 'sim', 'real − sim'].map((t) => h('th', {}, t)))),
      this.layouts,
    );
    root.append(
      h(
        'div',
        { class: 'grid wide-right' },
        h(
          'div',
          {},
          h(
            'div',
            { class: 'panel' },
            h('h2', {}, 'Real vs sim'),
            h('div', { class: 'pickrow' }, h('label', { for: 'compare-set' }, 'Layout set'), this.setPicker),
            this.policyBoxes,
            this.narrowRow,
            this.lengthNote,
            this.heading,
            this.refusal,
          ),
          h('div', { class: 'panel' }, h('h2', {}, 'Across policies'), this.across, this.leftOut),
          this.engines.root,
          h('div', { class: 'panel' }, h('h2', {}, 'Per tier'), tierTable),
          h(
            'div',
            { class: 'panel' },
            h('h2', {}, 'Per layout'),
            h('div', { class: 'pickrow' }, h('label', { for: 'compare-policy' }, 'Policy'), this.policyPicker),
            layoutTable,
          ),
        ),
        h(
          'div',
          {},
          h(
            'div',
            { class: 'panel', id: 'compare-3d' },
            h('h2', {}, 'Layout in 3D'),
            this.scene.canvas,
            this.sceneNote,
          ),
          this.replay.root,
        ),
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

  /** New rollouts stored: refresh the pickers and the numbers (when on screen). */
  async reload(): Promise<void> {
    if (!this.shown) return;
    this.choices = await api.compareChoices();
    const keep = this.setPicker.value;
    clear(this.setPicker);
    const sets = [...new Map(this.choices.map((c) => [c.layoutSet, c])).values()];
    for (const c of sets) {
      const mine = this.choices.filter((x) => x.layoutSet === c.layoutSet);
      const real = mine.reduce((a, x) => a + x.realRollouts, 0);
      const sim = mine.reduce((a, x) => a + x.simRollouts, 0);
      this.setPicker.append(
        h(
          'option',
          { value: c.layoutSet },
          `${c.task ?? '?'} · set ${c.layoutSet.slice(0, 10)} · ${plural(mine.length, 'policy', 'policies')} · ${real} real, ${sim} sim`,
        ),
      );
    }
    if (sets.length === 0) {
      this.setPicker.append(h('option', { value: '' }, 'No rollouts stored yet'));
      clear(this.policyBoxes);
      this.heading.textContent =
        "Nothing to compare yet: run rollouts on the rig (Rollouts page) and in the sim ('tandem sim sweep --layouts … --policy …') on the same layout set.";
      return;
    }
    if (keep && sets.some((s) => s.layoutSet === keep)) this.setPicker.value = keep;
    this.fillPolicies();
    await this.load();
  }

  showRig(rig: RigStatus): void {
    if (this.shown) this.scene.showArms(rig);
  }

  /** One tick box per policy with rollouts on the chosen set, in store order (iterations). */
  private fillPolicies(): void {
    const set = this.setPicker.value;
    const off = this.unticked.get(set) ?? new Set<number>();
    this.unticked.set(set, off);
    clear(this.policyBoxes);
    const mine = this.choices.filter((c) => c.layoutSet === set).sort((a, b) => a.policy.id - b.policy.id);
    for (const c of mine) {
      const box = h('input', {
        type: 'checkbox',
        id: `compare-policy-${c.policy.id}`,
        value: c.policy.id,
        checked: !off.has(c.policy.id),
      });
      // The stylesheet sizes every input to its row; a tick box is its own size (styles.css is not this view's).
      box.style.width = 'auto';
      box.style.marginRight = '0.375rem';
      box.onchange = () => {
        if (box.checked) off.delete(c.policy.id);
        else off.add(c.policy.id);
        void this.load().catch((e: Error) => this.hooks.report(e.message, true));
      };
      this.policyBoxes.append(h('label', { for: box.id }, box, c.policy.name));
    }
  }

  private narrowing(): CompareNarrowing {
    const set = this.setPicker.value;
    let n = this.narrowed.get(set);
    if (!n) this.narrowed.set(set, (n = {}));
    return n;
  }

  /**
   * A picker for each of sim calibration, real calibration and episode length that has more than
   * one stored value (or a pick): the report refuses a mix and names them; here they are offered.
   */
  private showNarrowing(choices: ReportChoices | undefined, defaults: CompareNarrowing = {}): string[] {
    const picked = { ...defaults, ...this.narrowing() };
    const toPick: string[] = [];
    for (const f of NARROW_FIELDS) {
      const { wrap, select } = this.narrowPickers.get(f.field)!;
      const options = choices ? narrowOptions(choices, f.field) : [];
      const current = picked[f.field] === undefined ? '' : String(picked[f.field]);
      wrap.style.display = options.length <= 1 && current === '' ? 'none' : '';
      clear(select);
      if (current === '') select.append(h('option', { value: '' }, `pick one of ${options.length}`));
      for (const o of options) select.append(h('option', { value: o.value }, o.text));
      if (current !== '' && !options.some((o) => o.value === current))
        select.append(
          h(
            'option',
            { value: current },
            `${f.field === 'episodeSeconds' ? `${current} s` : shortSha(current)} · none stored`,
          ),
        );
      select.value = current;
      if (options.length > 1 && current === '') toPick.push(`'${f.label}'`);
    }
    return toPick;
  }

  private async load(): Promise<void> {
    const set = this.setPicker.value;
    if (!set) return;
    const off = this.unticked.get(set) ?? new Set<number>();
    const policies = this.choices
      .filter((c) => c.layoutSet === set && !off.has(c.policy.id))
      .map((c) => c.policy.id)
      .sort((a, b) => a - b);
    if (policies.length === 0) {
      this.showRefusal('Tick at least one policy to compare.');
      return;
    }
    let d: CompareReport;
    const picked = this.narrowing();
    // Several episode lengths and none picked: the most common is compared, the others said in words.
    let byDefault: CompareNarrowing = {};
    this.lengthNote.hidden = true;
    try {
      try {
        d = await fetchCompareReport(set, policies, picked);
      } catch (e) {
        const lengths = e instanceof CompareRefusal ? (e.choices?.episodeSeconds ?? []) : [];
        const common = commonEpisodeLength(lengths);
        if (picked.episodeSeconds !== undefined || lengths.length < 2 || !common) throw e;
        byDefault = { episodeSeconds: common.value };
        d = await fetchCompareReport(set, policies, { ...picked, ...byDefault });
        const others = lengths
          .filter((x) => x.value !== common.value)
          .map((x) => `${x.value} s episodes (${sideCounts(x)})`);
        this.lengthNote.textContent = `Compared: ${common.value} s episodes, the length most of these rollouts ran (${sideCounts(common)}). Also stored, not in these numbers: ${others.join('; ')} — results of different episode lengths are never pooled; pick another under 'Episode length' to compare those.`;
        this.lengthNote.hidden = false;
      }
    } catch (e) {
      // A report that cannot be made as asked (two calibrations mixed, …): its reason, in place of
      // the numbers, and for a mix the pickers that make it answerable.
      const toPick = this.showNarrowing(e instanceof CompareRefusal ? e.choices : undefined, byDefault);
      // The sentence names the CLI's flag; in this view the picker is the way.
      this.showRefusal(
        `${(e as Error).message}${toPick.length ? ` Here: pick one under ${toPick.join(' and ')} above.` : ''}`,
      );
      return;
    }
    // Both engines stored: the report compared one record with real without being asked; show which.
    this.showNarrowing(
      d.choices,
      d.crossEngine && d.simCalibration ? { ...byDefault, simCalibration: d.simCalibration } : byDefault,
    );
    this.data = d;
    this.refusal.hidden = true;
    this.refusal.textContent = '';
    const layoutCount = d.layoutTiers.length;
    this.heading.textContent = `${plural(d.policies.length, 'policy', 'policies')} on ${d.task}, set ${d.layoutSet.slice(0, 12)} (${plural(layoutCount, 'layout')}). Task progress 0–1; real and sim are compared over the layouts both ran, a rollout counts when it is valid and scored.${d.realOnEmulatedCell ? ' Real here is the emulated cell: a rehearsal, not a result.' : ''}`;
    this.drawAcross(d);
    this.engines.show(d);
    this.drawTiers(d);
    const keep = this.policyPicker.value;
    clear(this.policyPicker);
    for (const p of d.policies) this.policyPicker.append(h('option', { value: p.key }, p.label));
    if (keep && d.policies.some((p) => p.key === keep)) this.policyPicker.value = keep;
    await this.drawLayouts();
  }

  private showRefusal(text: string): void {
    this.data = null;
    this.refusal.hidden = false;
    this.refusal.textContent = text;
    this.heading.textContent = 'No comparison for this choice:';
    for (const el of [this.tiers, this.layouts, this.across, this.leftOut, this.policyPicker]) clear(el);
    this.engines.show(null);
    this.selectedLayout = null;
    this.sceneNote.textContent = 'No layout picked: nothing to compare for this choice.';
    this.replay.showNote('Nothing to replay for this choice.');
  }

  /** Pearson r and MMRV with intervals (or why not), the rank violations, the A/B verdicts, and what is left out. */
  private drawAcross(d: CompareReport): void {
    clear(this.across);
    const c = d.correlation;
    if (c) {
      const r =
        c.pearson.r === null
          ? `Pearson r undefined (${c.pearson.undefinedBecause ?? 'no spread'})`
          : `Pearson r ${c.pearson.r.toFixed(2)} [${n2(c.pearson.lower)}, ${n2(c.pearson.upper)}]`;
      this.across.append(
        h(
          'p',
          { id: 'compare-r-mmrv', class: 'words' },
          `${r} · MMRV ${c.mmrv.value.toFixed(3)} [${c.mmrv.lower.toFixed(3)}, ${c.mmrv.upper.toFixed(3)}] over ${c.policies} policies (95% bootstrap over layouts, ${c.bootstrap.used} of ${c.bootstrap.resamples} resamples usable).`,
        ),
      );
      if (c.violations.length === 0)
        this.across.append(
          h('p', { class: 'muted' }, 'No rank violations: sim orders these policies as the real rig does.'),
        );
      else {
        const list = h('ul', { id: 'compare-violations' });
        for (const v of c.violations.filter((x) => x.drivesMmrv)) {
          list.append(
            h(
              'li',
              {},
              `Sim ranks ${v.policy} (${v.sim.toFixed(2)}) ${v.sim > v.againstSim ? 'above' : 'below'} ${v.against} (${v.againstSim.toFixed(2)}); the real rig the other way (${v.real.toFixed(2)} vs ${v.againstReal.toFixed(2)}, a gap of ${v.size.toFixed(2)}).`,
            ),
          );
        }
        this.across.append(
          h('p', {}, `${plural(c.violations.length, 'rank violation')}; the largest per policy (what MMRV averages):`),
          list,
        );
      }
    } else
      this.across.append(
        h('p', { id: 'compare-r-mmrv', class: 'words' }, d.correlationUnavailable ?? 'No correlation.'),
      );
    for (const a of d.abComparisons)
      this.across.append(
        h('p', { class: `small${a.verdict.decided ? ' decided' : ''}` }, `${a.a} vs ${a.b}: ${a.verdict.sentence}`),
      );
    clear(this.leftOut);
    const s = d.segregated;
    const lines: string[] = [];
    for (const u of s.unpairedPolicies) lines.push(`${u.policy}: no paired data (${u.reason}).`);
    if (s.awaitingScore.length)
      lines.push(
        `${plural(s.awaitingScore.length, 'real rollout')} await${s.awaitingScore.length === 1 ? 's' : ''} an operator score and ${s.awaitingScore.length === 1 ? 'is' : 'are'} not counted.`,
      );
    if (s.invalidOrAborted.length)
      lines.push(`${plural(s.invalidOrAborted.length, 'invalid or aborted rollout')} left out.`);
    if (s.otherCalibration.length)
      lines.push(`${plural(s.otherCalibration.length, 'rollout')} with another calibration left out.`);
    if (s.otherEpisodeLengthSentence) lines.push(s.otherEpisodeLengthSentence);
    for (const l of lines) this.leftOut.append(h('p', { class: 'muted' }, l));
  }

  private drawTiers(d: CompareReport): void {
    clear(this.tiers);
    const tierKeys: (number | 'all')[] = [...new Set(d.layoutTiers)].sort((a, b) => a - b);
    tierKeys.push('all');
    for (const p of d.policies) {
      tierKeys.forEach((tier, i) => {
        const find = (side: PolicyReport['real']): TierSummary | undefined => side?.tiers.find((t) => t.tier === tier);
        const real = find(p.real);
        const sim = find(p.sim);
        const gap = real && sim ? real.meanProgress - sim.meanProgress : null;
        this.tiers.append(
          h(
            'tr',
            { class: tier === 'all' ? 'total' : undefined, 'data-tier': String(tier), 'data-policy': p.key },
            h('td', {}, i === 0 ? p.label : ''),
            h('td', {}, tier === 'all' ? 'all tiers' : `tier ${tier}`),
            tierCell(real, 'real'),
            tierCell(sim, 'sim'),
            tierCell(find(p.simAllLayouts), 'sim'),
            h('td', { class: 'num' }, gapText(gap)),
          ),
        );
      });
    }
  }

  /** Every layout of the set for the chosen policy. */
  private async drawLayouts(): Promise<void> {
    const d = this.data;
    if (!d) return;
    const p = d.policies.find((x) => x.key === this.policyPicker.value) ?? d.policies[0];
    if (!p) return;
    clear(this.layouts);
    d.layoutTiers.forEach((tier, index) => {
      const l = p.layouts.find((x) => x.layoutIndex === index);
      const gap = l && l.real !== null && l.sim !== null ? l.real - l.sim : null;
      const row = h(
        'tr',
        { class: `clickable${index === this.selectedLayout ? ' selected' : ''}`, 'data-layout': index, tabindex: 0 },
        h('td', { class: 'num' }, `#${index}`),
        h('td', { class: 'num' }, String(tier)),
        layoutCell(l, 'real'),
        layoutCell(l, 'sim'),
        h('td', { class: 'num' }, gapText(gap)),
      );
      row.onclick = () => void this.pickLayout(index);
      row.onkeydown = (e) => {
        if (e.key === 'Enter') void this.pickLayout(index);
      };
      this.layouts.append(row);
    });
    const first = p.layouts.find((l) => l.realRolloutIds.length + l.simRolloutIds.length > 0)?.layoutIndex ?? 0;
    if (this.selectedLayout === null || this.selectedLayout >= d.layoutTiers.length) await this.pickLayout(first);
    else await this.pickLayout(this.selectedLayout);
  }

  private async pickLayout(index: number): Promise<void> {
    const d = this.data;
    if (!d) return;
    const p = d.policies.find((x) => x.key === this.policyPicker.value) ?? d.policies[0];
    this.selectedLayout = index;
    this.layouts
      .querySelectorAll('tr')
      .forEach((tr) => tr.classList.toggle('selected', tr.getAttribute('data-layout') === String(index)));
    const view = await api.layout(d.layoutSet, index);
    const row = p?.layouts.find((l) => l.layoutIndex === index);
    this.sceneNote.textContent = `Layout #${index}, tier ${view.layout.tier}: ${plural(view.layout.objects.length, 'object')}${view.layout.fixtures.length ? `, ${view.layout.fixtures.map((f) => f.kind).join(', ')}` : ''}. ${row ? `Real ${n2(row.real)}, sim ${n2(row.sim)}.` : ''} Arms as the rig is now.`;
    if (!this.scene.problem) this.scene.showLayout(view);
    if (!p) return;
    try {
      this.replay.show(await api.replay(Number(p.key), d.layoutSet, index));
      this.sceneNote.textContent = this.sceneNote.textContent.replace(
        'Arms as the rig is now.',
        'Arms as recorded (replay below).',
      );
    } catch (e) {
      this.replay.showNote((e as Error).message);
    }
  }
}
