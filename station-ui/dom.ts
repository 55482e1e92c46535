/** Small DOM helpers: elements from text only (never HTML strings), so nothing the station sends can inject markup. */
type Attrs = Record<string, string | number | boolean | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (k === 'class') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children)
    if (c !== null && c !== undefined) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

/**
 * Sets an element's text only when it differs: the rig state arrives 20 times a second, and every
 * write, even of the same words, makes the browser restyle, lay out and paint the page again.
 */
export function setText(el: HTMLElement, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

export function fixed(x: number | null | undefined, digits: number): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '—' : x.toFixed(digits);
}

/** "12 s ago", "just now" from an ISO time. */
export function ago(iso: string): string {
  const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
  if (s < 5) return 'just now';
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  return stamp(iso);
}

/**
 * A relative time that keeps ageing on screen: "just now" becomes "2 min ago" without a reload
 * (refreshAges, on a timer, rewrites every one of them from its stamp).
 */
export function agoEl(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, 'data-ago': iso, title: stamp(iso) }, ago(iso));
}

/** Rewrites every agoEl under `root` from its stamp. */
export function refreshAges(root: ParentNode = document): void {
  for (const el of Array.from(root.querySelectorAll<HTMLElement>('time[data-ago]')))
    el.textContent = ago(el.dataset.ago!);
}

/** "2026-12-01 13:24:43" in local time: unambiguous in any locale. */
export function stamp(iso: string): string {
  const d = new Date(iso);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}
