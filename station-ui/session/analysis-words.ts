/**
 * The pre-registered A/B analysis (src/analysis/anytime-ab.ts, computed by the station after every
 * scored pair) in the words the Session page shows at desk distance: one headline — "policy B is
 * better by 0.60: you may stop", "no difference larger than 0.10: you may stop", "about 4 more
 * pairs" — then the running B − A estimate with its confidence sequence and where the plan stands.
 * Names come from the plan's labels, so a blind session reads "policy A" / "policy B" only. Pure:
 * no DOM, so it is tested in node.
 */
import type { SessionResults } from '../../src/server/api-types.js';

export type SessionAnalysis = NonNullable<SessionResults['analysis']>;

export interface AnalysisWords {
  /** May the operator stop here (a rule holds), carry on, or is it over without a verdict. */
  readonly state: 'stop' | 'continue' | 'undecided';
  readonly headline: string;
  /** "policy B − policy A: +0.50 so far". */
  readonly estimate: string;
  /** "90% confidence sequence: −0.20 to +1.00 (valid at every look)". */
  readonly range: string;
  /** "4 of the plan's 12 pairs scored". */
  readonly pairs: string;
  /** What the session did with it: stopped itself here (and what that saved), or ended; null while it runs. */
  readonly outcome: string | null;
}

const signed = (x: number): string =>
  !Number.isFinite(x) ? '—' : x >= 0 ? `+${x.toFixed(2)}` : `−${Math.abs(x).toFixed(2)}`;
const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

/** `names`: the plan's first and second policy (a and b of B − A), as the session shows them. `ended`: the session is over. */
export function analysisWords(
  x: SessionAnalysis,
  names: { readonly a: string; readonly b: string },
  ended: boolean,
): AnalysisWords {
  const level = `${Math.round((1 - x.alpha) * 1000) / 10}%`;
  const estimate = `${names.b} − ${names.a}: ${x.pairs === 0 ? (ended ? 'no pair scored' : 'no pair yet') : ended ? signed(x.estimate) : `${signed(x.estimate)} so far`}`;
  const range = `${level} confidence sequence: ${signed(x.lower)} to ${signed(x.upper)} (valid at every look)`;
  const pairs = `${x.pairs} of the plan's ${plural(x.maxPairs, 'pair')} scored`;
  const stoppedHere = x.stoppedEarly
    ? `The session stopped itself here, by its pre-registered rule: ${plural(x.pairsSaved, 'pair')} of the plan not needed.`
    : ended
      ? 'The session is over.'
      : null;
  if (x.kind === 'b-better' || x.kind === 'a-better') {
    const winner = x.kind === 'b-better' ? names.b : names.a;
    const by = Math.abs(x.estimate).toFixed(2);
    return {
      state: 'stop',
      headline: ended ? `${winner} is better by ${by}.` : `${winner} is better by ${by}: you may stop.`,
      estimate,
      range,
      pairs,
      outcome: stoppedHere,
    };
  }
  if (x.kind === 'no-difference') {
    const y = Math.max(Math.abs(x.lower), Math.abs(x.upper)).toFixed(2);
    return {
      state: 'stop',
      headline: ended ? `No difference larger than ${y}.` : `No difference larger than ${y}: you may stop.`,
      estimate,
      range,
      pairs,
      outcome: stoppedHere,
    };
  }
  if (x.kind === 'undecided') {
    const why =
      x.pairs >= x.maxPairs
        ? `the plan's ${plural(x.maxPairs, 'pair')} ${x.maxPairs === 1 ? 'is' : 'are'} done`
        : `the session ended after ${x.pairs} of the plan's ${plural(x.maxPairs, 'pair')}`;
    return {
      state: 'undecided',
      headline: `No verdict: ${why} and neither rule holds.`,
      estimate,
      range,
      pairs,
      outcome: ended ? 'The session is over.' : null,
    };
  }
  const left = x.maxPairs - x.pairs;
  const more =
    x.morePairs === null
      ? `More pairs than the plan's ${left} left would be needed if the next look like these`
      : `About ${plural(x.morePairs, 'more pair')}${x.pairs < 3 ? ' at the least' : ''}`;
  return {
    state: 'continue',
    headline: x.pairs === 0 ? `No pair scored yet. ${more}.` : `Not clear yet. ${more}.`,
    estimate,
    range,
    pairs,
    outcome: null,
  };
}
