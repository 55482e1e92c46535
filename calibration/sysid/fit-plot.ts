/**
 * The fit's picture: one joint of one held-out episode, measured against the sim replayed with the
 * start record and with the fitted one, over time, with the error of each beneath. Plain SVG
 * (no network, opens in any browser, drops into a paper).
 */

export interface FitPlotInput {
  readonly title: string;
  readonly jointName: string;
  readonly timesS: ArrayLike<number>;
  readonly measured: ArrayLike<number>;
  readonly before: ArrayLike<number>;
  readonly after: ArrayLike<number>;
  readonly beforeLabel: string;
  readonly afterLabel: string;
}

const W = 960;
const H = 560;
const M = { l: 70, r: 20, t: 64, b: 50 };
const COLOURS = { measured: '#1b1b1b', before: '#c2410c', after: '#1d4ed8' };

export function fitPlotSvg(p: FitPlotInput): string {
  const n = p.timesS.length;
  const t0 = n > 0 ? p.timesS[0] : 0;
  const t1 = n > 0 ? p.timesS[n - 1] : 1;
  const topH = (H - M.t - M.b) * 0.62;
  const gap = 30;
  const botTop = M.t + topH + gap;
  const botH = H - M.b - botTop;
  const [yMin, yMax] = range([p.measured, p.before, p.after]);
  const errB = Array.from({ length: n }, (_, i) => (p.measured[i] - p.before[i]) * 1000);
  const errA = Array.from({ length: n }, (_, i) => (p.measured[i] - p.after[i]) * 1000);
  const [eMin, eMax] = range([errB, errA], true);
  const x = (t: number): number => M.l + ((t - t0) / (t1 - t0 || 1)) * (W - M.l - M.r);
  const yTop = (v: number): number => M.t + topH - ((v - yMin) / (yMax - yMin || 1)) * topH;
  const yBot = (v: number): number => botTop + botH - ((v - eMin) / (eMax - eMin || 1)) * botH;
  const line = (vals: ArrayLike<number>, y: (v: number) => number, colour: string, width = 1.5): string => {
    const step = Math.max(1, Math.floor(n / 1500));
    let d = '';
    for (let i = 0; i < n; i += step)
      d += `${i === 0 ? 'M' : 'L'}${x(p.timesS[i]).toFixed(1)},${y(vals[i]).toFixed(1)}`;
    return `<path d="${d}" fill="none" stroke="${colour}" stroke-width="${width}"/>`;
  };
  const ticks = (lo: number, hi: number, y: (v: number) => number, fmt: (v: number) => string): string =>
    niceTicks(lo, hi)
      .map(
        (v) =>
          `<line x1="${M.l}" x2="${W - M.r}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e7eb"/><text x="${M.l - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(v)}</text>`,
      )
      .join('');
  // Ticks on the episode's own seconds (the file's clock), not on the time since the burn-in.
  const xTicks = niceTicks(t0, t1)
    .map(
      (t) =>
        `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${M.t}" y2="${H - M.b}" stroke="#f1f5f9"/><text x="${x(t).toFixed(1)}" y="${H - M.b + 18}" text-anchor="middle">${Number(t.toPrecision(6))}</text>`,
    )
    .join('');
  const legend = [
    ['measured', COLOURS.measured],
    [p.beforeLabel, COLOURS.before],
    [p.afterLabel, COLOURS.after],
  ]
    .map(
      ([label, c], i) =>
        `<rect x="${M.l + i * 260}" y="${M.t - 22}" width="14" height="3" fill="${c}"/><text x="${M.l + i * 260 + 20}" y="${M.t - 17}">${esc(label)}</text>`,
    )
    .join('');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    xTicks,
    `<text x="${M.l}" y="18" font-size="14" font-weight="bold">${esc(p.title)}</text>`,
    legend,
    ticks(yMin, yMax, yTop, (v) => v.toFixed(2)),
    `<text x="16" y="${M.t + topH / 2}" transform="rotate(-90 16 ${M.t + topH / 2})" text-anchor="middle">${esc(p.jointName)} angle (rad)</text>`,
    line(p.before, yTop, COLOURS.before),
    line(p.after, yTop, COLOURS.after),
    line(p.measured, yTop, COLOURS.measured, 1.2),
    ticks(eMin, eMax, yBot, (v) => v.toFixed(0)),
    `<text x="16" y="${botTop + botH / 2}" transform="rotate(-90 16 ${botTop + botH / 2})" text-anchor="middle">error (mrad)</text>`,
    line(errB, yBot, COLOURS.before),
    line(errA, yBot, COLOURS.after),
    `<text x="${(M.l + W - M.r) / 2}" y="${H - 12}" text-anchor="middle">time in the episode (s)</text>`,
    '</svg>',
  ].join('\n');
}

function range(series: readonly ArrayLike<number>[], symmetric = false): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series)
    for (let i = 0; i < s.length; i++) if (Number.isFinite(s[i])) [lo, hi] = [Math.min(lo, s[i]), Math.max(hi, s[i])];
  if (!Number.isFinite(lo)) return [0, 1];
  if (symmetric) {
    const m = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    return [-m, m];
  }
  const pad = (hi - lo) * 0.05 || 0.01;
  return [lo - pad, hi + pad];
}

function niceTicks(lo: number, hi: number): number[] {
  const span = hi - lo || 1;
  const raw = span / 5;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) out.push(Number(v.toPrecision(10)));
  return out;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
