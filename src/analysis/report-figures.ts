/**
 * The paired report's figures as standalone SVG strings: no scripts, no fonts or images from
 * anywhere, so the HTML file opens offline and each figure converts to PNG as it is. Colour is
 * never the only cue: sim bars are hatched, real bars solid, and every mark is labelled.
 */
import type { PairedReport } from './paired-report.js';

export interface Figure {
  /** File-name stem, e.g. "sim-vs-real". */
  readonly name: string;
  readonly title: string;
  readonly svg: string;
}

const W = 640;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';
const INK = '#222';
const GRID = '#ddd';
const REAL = '#1f4e8c';
const SIM = '#d07a1a';
const PALETTE = ['#1f4e8c', '#b8442b', '#2f7d4f', '#7a4fa0', '#8a6d1f', '#2a7f8f', '#a03c78', '#555555'];

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const n2 = (x: number): string => x.toFixed(2);
const px = (x: number): string => x.toFixed(1);

function svg(width: number, height: number, body: string, title: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}"><rect width="100%" height="100%" fill="#fff"/>${body}</svg>`;
}

function text(
  x: number,
  y: number,
  s: string,
  opts: { size?: number; anchor?: 'start' | 'middle' | 'end'; weight?: string; fill?: string; rotate?: number } = {},
): string {
  const rot = opts.rotate ? ` transform="rotate(${opts.rotate} ${px(x)} ${px(y)})"` : '';
  return `<text x="${px(x)}" y="${px(y)}" ${FONT} font-size="${opts.size ?? 12}" text-anchor="${opts.anchor ?? 'start'}" fill="${opts.fill ?? INK}"${opts.weight ? ` font-weight="${opts.weight}"` : ''}${rot}>${escapeXml(s)}</text>`;
}

function line(x1: number, y1: number, x2: number, y2: number, stroke: string, width = 1, dash?: string): string {
  return `<line x1="${px(x1)}" y1="${px(y1)}" x2="${px(x2)}" y2="${px(y2)}" stroke="${stroke}" stroke-width="${width}"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`;
}

/** Axes on [0, 1] × [0, 1] (or given ranges) with ticks and a light grid. */
function axes(o: {
  x0: number;
  y0: number;
  w: number;
  h: number;
  xMax?: number;
  yMax?: number;
  xLabel: string;
  yLabel: string;
  xTicks?: number[];
  xFmt?: (v: number) => string;
}): string {
  const xMax = o.xMax ?? 1;
  const yMax = o.yMax ?? 1;
  const parts: string[] = [];
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((t) => t * yMax);
  const xTicks = o.xTicks ?? [0, 0.25, 0.5, 0.75, 1].map((t) => t * xMax);
  for (const t of yTicks) {
    const y = o.y0 + o.h - (t / yMax) * o.h;
    parts.push(line(o.x0, y, o.x0 + o.w, y, GRID), text(o.x0 - 6, y + 4, n2(t), { anchor: 'end', size: 11 }));
  }
  for (const t of xTicks) {
    const x = o.x0 + (t / xMax) * o.w;
    parts.push(
      line(x, o.y0, x, o.y0 + o.h, GRID),
      text(x, o.y0 + o.h + 16, o.xFmt ? o.xFmt(t) : n2(t), { anchor: 'middle', size: 11 }),
    );
  }
  parts.push(line(o.x0, o.y0 + o.h, o.x0 + o.w, o.y0 + o.h, INK), line(o.x0, o.y0, o.x0, o.y0 + o.h, INK));
  parts.push(text(o.x0 + o.w / 2, o.y0 + o.h + 36, o.xLabel, { anchor: 'middle', size: 12 }));
  parts.push(text(o.x0 - 42, o.y0 + o.h / 2, o.yLabel, { anchor: 'middle', size: 12, rotate: -90 }));
  return parts.join('');
}

/** Sim (x) vs real (y) mean progress per policy on paired layouts, 95% bootstrap bars both ways, identity line. */
export function scatterFigure(report: PairedReport): Figure {
  const title = 'Sim vs real mean task progress (paired layouts, 95% bootstrap intervals)';
  const x0 = 70;
  const y0 = 20;
  const size = 400;
  const X = (v: number): number => x0 + v * size;
  const Y = (v: number): number => y0 + size - v * size;
  const parts = [axes({ x0, y0, w: size, h: size, xLabel: 'sim mean progress', yLabel: 'real mean progress' })];
  parts.push(
    line(X(0), Y(0), X(1), Y(1), '#888', 1, '5 4'),
    text(X(0.97), Y(0.97) + 16, 'sim = real', { anchor: 'end', size: 11, fill: '#666' }),
  );
  const legend: string[] = [];
  report.policies.forEach((p, i) => {
    if (!p.real || !p.sim) return;
    const s = p.sim.tiers.at(-1)!;
    const r = p.real.tiers.at(-1)!;
    const c = PALETTE[i % PALETTE.length];
    const cx = X(s.meanProgress);
    const cy = Y(r.meanProgress);
    parts.push(
      line(X(s.progressInterval.lower), cy, X(s.progressInterval.upper), cy, c, 1.5),
      line(cx, Y(r.progressInterval.lower), cx, Y(r.progressInterval.upper), c, 1.5),
    );
    parts.push(`<circle cx="${px(cx)}" cy="${px(cy)}" r="5" fill="${c}" stroke="#fff" stroke-width="1.5"/>`);
    parts.push(text(cx + 8, cy - 7, String(i + 1), { size: 12, weight: 'bold', fill: c }));
    legend.push(`${i + 1}  ${p.label}`);
  });
  const lx = x0 + size + 24;
  legend.forEach((l, i) =>
    parts.push(
      text(lx, y0 + 14 + i * 18, l.length > 28 ? `${l.slice(0, 27)}…` : l, {
        size: 11,
        fill: PALETTE[i % PALETTE.length],
      }),
    ),
  );
  if (report.correlation) {
    const c = report.correlation;
    const yy = y0 + 14 + legend.length * 18 + 16;
    parts.push(
      text(lx, yy, `Pearson r ${c.pearson.r === null ? 'undefined' : n2(c.pearson.r)}`, { size: 12, weight: 'bold' }),
    );
    if (c.pearson.lower !== null)
      parts.push(text(lx, yy + 16, `  95% [${n2(c.pearson.lower)}, ${n2(c.pearson.upper!)}]`, { size: 11 }));
    parts.push(text(lx, yy + 36, `MMRV ${c.mmrv.value.toFixed(3)}`, { size: 12, weight: 'bold' }));
    parts.push(text(lx, yy + 52, `  95% [${c.mmrv.lower.toFixed(3)}, ${c.mmrv.upper.toFixed(3)}]`, { size: 11 }));
  }
  return { name: 'sim-vs-real', title, svg: svg(W, y0 + size + 50, parts.join(''), title) };
}

const HATCH = `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6e2c9"/><line x1="0" y1="0" x2="0" y2="6" stroke="${SIM}" stroke-width="2.5"/></pattern></defs>`;

/** Per tier and policy: sim (hatched) and real (solid) mean progress with 95% whiskers, on paired layouts. */
export function tierBarsFigure(report: PairedReport): Figure {
  const title = 'Mean task progress per tier: sim (hatched) and real (solid), paired layouts';
  const withData = report.policies.filter((p) => p.real && p.sim);
  const tiers = [...new Set(withData.flatMap((p) => p.real!.tiers.map((t) => t.tier)))]
    .filter((t) => t !== 'all')
    .sort((a, b) => Number(a) - Number(b));
  const groups = [...tiers, 'all' as const];
  const x0 = 60;
  const y0 = 30;
  const h = 220;
  const barW = 12;
  const groupW = Math.max(60, withData.length * (2 * barW + 6) + 20);
  const width = Math.max(W, x0 + groups.length * groupW + 20);
  const Y = (v: number): number => y0 + h - v * h;
  const parts = [
    HATCH,
    axes({ x0, y0, w: groups.length * groupW, h, xTicks: [], xLabel: '', yLabel: 'mean progress' }),
  ];
  groups.forEach((tier, gi) => {
    const gx = x0 + gi * groupW + 10;
    parts.push(
      text(gx + (groupW - 20) / 2, y0 + h + 16, tier === 'all' ? 'all tiers' : `tier ${tier}`, {
        anchor: 'middle',
        size: 12,
      }),
    );
    withData.forEach((p, pi) => {
      const i = report.policies.indexOf(p);
      const bx = gx + pi * (2 * barW + 6);
      const draw = (s: (typeof withData)[number]['sim'], dx: number, fill: string, stroke: string): void => {
        const t = s!.tiers.find((q) => q.tier === tier);
        if (!t) return;
        const x = bx + dx;
        parts.push(
          `<rect x="${px(x)}" y="${px(Y(t.meanProgress))}" width="${barW}" height="${px(Math.max(0.5, h - (Y(t.meanProgress) - y0)))}" fill="${fill}" stroke="${stroke}" stroke-width="0.8"/>`,
        );
        const mid = x + barW / 2;
        parts.push(
          line(mid, Y(t.progressInterval.lower), mid, Y(t.progressInterval.upper), INK, 1),
          line(mid - 3, Y(t.progressInterval.upper), mid + 3, Y(t.progressInterval.upper), INK),
          line(mid - 3, Y(t.progressInterval.lower), mid + 3, Y(t.progressInterval.lower), INK),
        );
      };
      draw(p.sim, 0, 'url(#hatch)', SIM);
      draw(p.real, barW, PALETTE[i % PALETTE.length], PALETTE[i % PALETTE.length]);
      parts.push(
        text(bx + barW, y0 + h + 30, String(i + 1), { anchor: 'middle', size: 10, fill: PALETTE[i % PALETTE.length] }),
      );
    });
  });
  parts.push(
    `<rect x="${x0 + 6}" y="6" width="14" height="12" fill="url(#hatch)" stroke="${SIM}"/>`,
    text(x0 + 24, 16, 'sim', { size: 11 }),
  );
  parts.push(
    `<rect x="${x0 + 60}" y="6" width="14" height="12" fill="${REAL}"/>`,
    text(x0 + 78, 16, 'real (policy colour; number = policy)', { size: 11 }),
  );
  return { name: 'tiers', title, svg: svg(width, y0 + h + 44, parts.join(''), title) };
}

/** Per policy: the real-only 95% interval and the control-variate one, same real rollouts. */
export function controlVariateFigure(report: PairedReport): Figure {
  const title = 'Real mean progress: real-only vs sim as control variate (same real rollouts, 95%)';
  const rows = report.policies.filter((p) => p.controlVariate);
  const x0 = 200;
  const y0 = 30;
  const w = 380;
  const rowH = 34;
  const X = (v: number): number => x0 + v * w;
  const parts = [
    axes({
      x0,
      y0,
      w,
      h: rows.length * rowH,
      xLabel: 'real mean progress',
      yLabel: '',
      xTicks: [0, 0.25, 0.5, 0.75, 1],
    }).replace(/<text[^>]*>[^<]*<\/text>/g, (m) => (m.includes('text-anchor="end"') ? '' : m)),
  ];
  rows.forEach((p, i) => {
    const cv = p.controlVariate!;
    const y = y0 + i * rowH + 10;
    parts.push(
      text(x0 - 8, y + 8, p.label.length > 26 ? `${p.label.slice(0, 25)}…` : p.label, { anchor: 'end', size: 11 }),
    );
    parts.push(
      line(X(cv.realOnly.lower), y, X(cv.realOnly.upper), y, '#888', 5),
      `<circle cx="${px(X(cv.realOnly.estimate))}" cy="${y}" r="3.5" fill="#444"/>`,
    );
    parts.push(
      line(X(cv.lower), y + 12, X(cv.upper), y + 12, REAL, 5),
      `<circle cx="${px(X(cv.estimate))}" cy="${y + 12}" r="3.5" fill="#fff" stroke="${REAL}" stroke-width="2"/>`,
    );
  });
  parts.push(
    line(x0, 12, x0 + 24, 12, '#888', 5),
    text(x0 + 30, 16, 'real only', { size: 11 }),
    line(x0 + 110, 12, x0 + 134, 12, REAL, 5),
    text(x0 + 140, 16, 'with sim (control variate)', { size: 11 }),
  );
  return { name: 'control-variate', title, svg: svg(W, y0 + rows.length * rowH + 44, parts.join(''), title) };
}

/** Real progress against cumulative evaluation cost, policies in the order given, real-only vs sim-enabled. */
export function costFigure(report: PairedReport): Figure {
  const title = `Real progress vs cumulative evaluation cost (${report.cost.config.currency})`;
  const pts = report.cost.curve;
  const x0 = 70;
  const y0 = 20;
  const w = 440;
  const h = 260;
  const maxCost = Math.max(1e-9, ...pts.map((p) => Math.max(p.realOnlyCost, p.simEnabledCost)));
  const step = niceStep(maxCost / 4);
  const xMax = Math.ceil(maxCost / step) * step;
  const X = (v: number): number => x0 + (v / xMax) * w;
  const Y = (v: number): number => y0 + h - v * h;
  const ticks = Array.from({ length: Math.round(xMax / step) + 1 }, (_, i) => i * step);
  const parts = [
    axes({
      x0,
      y0,
      w,
      h,
      xMax,
      xTicks: ticks,
      xFmt: (v) => (step < 1 ? v.toFixed(2) : v.toFixed(0)),
      xLabel: `cumulative cost (${report.cost.config.currency})`,
      yLabel: 'real mean progress',
    }),
  ];
  const path = (xs: number[], ys: number[], stroke: string, dash?: string): string =>
    `<polyline fill="none" stroke="${stroke}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''} points="${xs.map((x, i) => `${px(X(x))},${px(Y(ys[i]))}`).join(' ')}"/>`;
  parts.push(
    path(
      pts.map((p) => p.realOnlyCost),
      pts.map((p) => p.realOnlyProgress),
      '#888',
      '6 4',
    ),
  );
  parts.push(
    path(
      pts.map((p) => p.simEnabledCost),
      pts.map((p) => p.simEnabledProgress),
      REAL,
    ),
  );
  pts.forEach((p, i) => {
    parts.push(
      `<rect x="${px(X(p.realOnlyCost) - 4)}" y="${px(Y(p.realOnlyProgress) - 4)}" width="8" height="8" fill="#888"/>`,
    );
    parts.push(`<circle cx="${px(X(p.simEnabledCost))}" cy="${px(Y(p.simEnabledProgress))}" r="4.5" fill="${REAL}"/>`);
    parts.push(
      text(X(p.simEnabledCost) + 7, Y(p.simEnabledProgress) - 7, String(i + 1), {
        size: 11,
        weight: 'bold',
        fill: REAL,
      }),
    );
  });
  const lx = x0 + w + 16;
  parts.push(line(lx, 30, lx + 24, 30, '#888', 2, '6 4'), text(lx + 30, 34, 'real only', { size: 11 }));
  parts.push(line(lx, 50, lx + 24, 50, REAL, 2), text(lx + 30, 54, 'sim-enabled', { size: 11 }));
  parts.push(
    text(lx, 78, 'same precision', { size: 10, fill: '#666' }),
    text(lx, 91, 'both ways', { size: 10, fill: '#666' }),
  );
  return { name: 'cost', title, svg: svg(W, y0 + h + 50, parts.join(''), title) };
}

/** Time-to-success curves: the share of units done by each episode second, per policy; sim dashed, real solid. */
export function timeToSuccessFigure(report: PairedReport): Figure {
  const title = 'Time to success: share of objects done by each second of the episode';
  const x0 = 70;
  const y0 = 20;
  const w = 440;
  const h = 260;
  const xMax = Math.max(
    1,
    report.episodeSeconds ?? 0,
    ...report.policies.flatMap((p) =>
      [p.throughput.sim, p.throughput.real].flatMap((t) => (t ? t.curve.map((c) => c.tS) : [])),
    ),
  );
  const step = niceStep(xMax / 4);
  const top = Math.ceil(xMax / step) * step;
  const X = (v: number): number => x0 + (v / top) * w;
  const Y = (v: number): number => y0 + h - v * h;
  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const parts = [
    axes({
      x0,
      y0,
      w,
      h,
      xMax: top,
      xTicks: ticks,
      xFmt: (v) => `${v.toFixed(0)} s`,
      xLabel: 'episode time',
      yLabel: 'objects done (share)',
    }),
  ];
  let ly = 30;
  report.policies.forEach((p, i) => {
    const colour = PALETTE[i % PALETTE.length];
    for (const side of ['real', 'sim'] as const) {
      const t = p.throughput[side];
      if (!t || t.times.length === 0) continue;
      // A step function held to the episode's end: the share stays where the last success left it.
      const pts: string[] = [];
      let prev = 0;
      for (const c of t.curve) {
        pts.push(`${px(X(c.tS))},${px(Y(prev))}`, `${px(X(c.tS))},${px(Y(c.fraction))}`);
        prev = c.fraction;
      }
      pts.push(`${px(X(top))},${px(Y(prev))}`);
      parts.push(
        `<polyline fill="none" stroke="${colour}" stroke-width="2"${side === 'sim' ? ' stroke-dasharray="6 4"' : ''} points="${pts.join(' ')}"/>`,
      );
      parts.push(
        line(x0 + w + 16, ly, x0 + w + 40, ly, colour, 2, side === 'sim' ? '6 4' : undefined),
        text(x0 + w + 46, ly + 4, `${p.label.length > 24 ? `…${p.label.slice(-23)}` : p.label} ${side}`, { size: 10 }),
      );
      ly += 16;
    }
  });
  return { name: 'time-to-success', title, svg: svg(W + 110, y0 + h + 50, parts.join(''), title) };
}

function niceStep(raw: number): number {
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}

export function reportFigures(report: PairedReport): Figure[] {
  // Nothing paired, nothing to draw: the report's text says why instead of showing empty axes.
  const figs = report.policies.some((p) => p.real && p.sim) ? [scatterFigure(report), tierBarsFigure(report)] : [];
  if (report.policies.some((p) => p.controlVariate)) figs.push(controlVariateFigure(report));
  if (report.cost.curve.length > 0) figs.push(costFigure(report));
  if (report.policies.some((p) => (p.throughput.sim?.times.length ?? 0) + (p.throughput.real?.times.length ?? 0) > 0))
    figs.push(timeToSuccessFigure(report));
  return figs;
}
