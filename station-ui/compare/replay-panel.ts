/**
 * The replay of a recorded real episode beside its sim twin: a time scrubber (and play), the 3D
 * arms at that instant — real solid, sim translucent — and the joint-error traces (sim − real per
 * joint over the episode, a cursor at the instant). Data from GET /api/compare/replay; drawn on
 * demand only.
 */
import type { ReplayView } from '../../src/server/api-types.js';
import { clear, h } from '../dom.js';
import type { Table3d } from './table-3d.js';

/** Trace colours by joint (1–6, gripper); left solid, right dashed — told apart without colour too. */
const JOINT_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#7f7f7f'];

function valuesAt(names: readonly string[], row: readonly number[]): Record<string, number> {
  const out: Record<string, number> = {};
  names.forEach((n, i) => (out[n] = row[i]));
  return out;
}

/** Index of the last sample at or before t. */
function indexAt(times: readonly number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  if (hi < 0 || t <= times[0]) return 0;
  if (t >= times[hi]) return hi;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (times[mid] <= t) lo = mid;
    else hi = mid;
  }
  return lo;
}

export class ReplayPanel {
  readonly root = h('div', { class: 'panel', id: 'replay' });
  private readonly slider = h('input', {
    type: 'range',
    id: 'replay-time',
    min: 0,
    max: 1000,
    value: 0,
    'aria-label': 'Replay time',
  });
  private readonly playBtn = h('button', { class: 'btn', id: 'replay-play', type: 'button' }, 'Play');
  private readonly clock = h('span', { class: 'mono', id: 'replay-clock' }, '');
  private readonly traces = h('canvas', {
    id: 'replay-traces',
    'aria-label': 'Joint error, sim minus real, over the episode',
  });
  private readonly summary = h('div', { class: 'small', id: 'replay-summary' });
  private view: ReplayView | null = null;
  private playing = 0;

  constructor(private readonly scene: Table3d) {
    this.slider.oninput = () => this.seek();
    this.playBtn.onclick = () => this.togglePlay();
    this.showNote('Pick a layout with a recorded real rollout to replay it beside its sim twin.');
  }

  get active(): boolean {
    return this.view !== null;
  }

  showNote(text: string): void {
    this.stop();
    this.view = null;
    this.scene.endReplay();
    clear(this.root);
    this.root.append(h('h2', {}, 'Replay: real beside sim'), h('p', { class: 'muted', id: 'replay-note' }, text));
  }

  show(v: ReplayView): void {
    this.stop();
    this.view = v;
    clear(this.root);
    const duration = v.real.timesS[v.real.timesS.length - 1] ?? 0;
    const simWords = v.sim
      ? `sim rollout ${v.sim.rolloutId} (${v.sim.status}${v.sim.progress === null ? '' : `, progress ${v.sim.progress.toFixed(2)}`}), translucent`
      : (v.simNote ?? 'no sim twin');
    this.root.append(
      h('h2', {}, 'Replay: real beside sim'),
      h(
        'p',
        { class: 'muted', id: 'replay-note' },
        `Real rollout ${v.real.rolloutId} (${v.real.status}${v.real.progress === null ? '' : `, progress ${v.real.progress.toFixed(2)}`}), ${duration.toFixed(1)} s, solid; ${simWords}.`,
      ),
      h('div', { class: 'pickrow' }, this.playBtn, this.slider, this.clock),
      this.traces,
      this.summary,
    );
    clear(this.summary);
    if (v.sim) {
      const worst = v.rmsErrorRad
        .map((e, k) => ({ e, name: v.errorJointNames[k] }))
        .filter((x) => x.e !== null && !x.name.endsWith('gripper'))
        .sort((a, b) => b.e! - a.e!);
      this.summary.append(
        `Joint error sim − real (rad; left solid, right dashed; colour = joint 1–6). RMS worst: ${worst
          .slice(0, 3)
          .map((x) => `${x.name} ${x.e!.toFixed(3)}`)
          .join(', ')}.`,
      );
    }
    this.scene.startReplay(v.sim !== null);
    this.slider.value = '0';
    this.seek();
  }

  private timeOf(): number {
    const v = this.view!;
    const duration = v.real.timesS[v.real.timesS.length - 1] ?? 0;
    return (Number(this.slider.value) / 1000) * duration;
  }

  private seek(): void {
    const v = this.view;
    if (!v) return;
    const t = this.timeOf();
    this.clock.textContent = `${t.toFixed(2)} s`;
    const i = indexAt(v.real.timesS, t);
    this.scene.poseReplay('real', valuesAt(v.real.jointNames, v.real.positions[i]));
    if (v.sim) this.scene.poseReplay('sim', valuesAt(v.sim.jointNames, v.sim.positions[indexAt(v.sim.timesS, t)]));
    this.drawTraces(i);
  }

  private togglePlay(): void {
    if (this.playing) return this.stop();
    if (Number(this.slider.value) >= 1000) this.slider.value = '0';
    const v = this.view;
    if (!v) return;
    const duration = v.real.timesS[v.real.timesS.length - 1] ?? 0;
    if (duration <= 0) return;
    const start = performance.now() - (Number(this.slider.value) / 1000) * duration * 1000;
    this.playBtn.textContent = 'Pause';
    const step = (): void => {
      const f = (performance.now() - start) / (duration * 1000);
      this.slider.value = String(Math.min(1000, Math.round(f * 1000)));
      this.seek();
      if (f >= 1) return this.stop();
      this.playing = requestAnimationFrame(step);
    };
    this.playing = requestAnimationFrame(step);
  }

  private stop(): void {
    if (this.playing) cancelAnimationFrame(this.playing);
    this.playing = 0;
    this.playBtn.textContent = 'Play';
  }

  private drawTraces(cursor: number): void {
    const v = this.view;
    const c = this.traces;
    const w = c.clientWidth;
    const hgt = c.clientHeight;
    if (!v || w === 0 || hgt === 0) return;
    const dpr = devicePixelRatio;
    if (c.width !== Math.round(w * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(hgt * dpr);
    }
    const g = c.getContext('2d');
    if (!g) return;
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, hgt);
    const font = parseFloat(getComputedStyle(document.documentElement).fontSize);
    g.font = `${0.75 * font}px "DejaVu Sans", sans-serif`;
    g.fillStyle = '#5b6676';
    if (!v.sim) {
      g.fillText('No sim twin to compare with.', 8, hgt / 2);
      return;
    }
    const n = v.real.timesS.length;
    const duration = v.real.timesS[n - 1] || 1;
    let max = 0.01;
    for (const row of v.errorRad)
      row.forEach(
        (e, k) => e !== null && !v.errorJointNames[k].endsWith('gripper') && (max = Math.max(max, Math.abs(e))),
      );
    const left = 3.2 * font;
    const plotW = w - left - 8;
    const x = (t: number): number => left + (t / duration) * plotW;
    const y = (e: number): number => hgt / 2 - (e / max) * (hgt / 2 - 8);
    g.strokeStyle = '#c9d1db';
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(left, hgt / 2);
    g.lineTo(w - 8, hgt / 2);
    g.stroke();
    g.fillText(`+${max.toFixed(2)}`, 2, 0.9 * font);
    g.fillText('0', 2, hgt / 2 + 0.3 * font);
    g.fillText(`−${max.toFixed(2)}`, 2, hgt - 4);
    v.errorJointNames.forEach((name, k) => {
      if (name.endsWith('gripper')) return;
      const joint = Number(/joint(\d)/.exec(name)?.[1] ?? 1) - 1;
      g.strokeStyle = JOINT_COLOURS[joint] ?? '#333';
      g.setLineDash(name.startsWith('right') ? [4, 3] : []);
      g.lineWidth = 1.5;
      g.beginPath();
      let pen = false;
      for (let i = 0; i < n; i++) {
        const e = v.errorRad[i][k];
        if (e === null) {
          pen = false;
          continue;
        }
        if (pen) g.lineTo(x(v.real.timesS[i]), y(e));
        else g.moveTo(x(v.real.timesS[i]), y(e));
        pen = true;
      }
      g.stroke();
    });
    g.setLineDash([]);
    g.strokeStyle = '#1c2430';
    g.lineWidth = 2;
    g.beginPath();
    g.moveTo(x(v.real.timesS[cursor]), 4);
    g.lineTo(x(v.real.timesS[cursor]), hgt - 4);
    g.stroke();
  }
}
