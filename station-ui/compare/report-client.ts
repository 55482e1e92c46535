/**
 * The compare view's request for the paired report (GET /api/compare/report): the same data as
 * `tandem report --json`, typed end to end (CompareReport). Same-origin like every request
 * of station-ui/api.ts, and its refusals arrive the same way: an ApiFailure with the station's
 * sentence (a report that cannot be made as asked says why, in words) — for a mix of calibrations
 * or episode lengths, with what is stored to pick from.
 */
import type { ReportChoices } from '../../src/analysis/paired-report.js';
import type { ApiError, CompareReport } from '../../src/server/api-types.js';
import { ApiFailure } from '../api.js';
import { tokenHeaders } from '../token.js';
import type { CrossEngineData } from './cross-engine-panel.js';

/** The paired report, and beside it the engines' agreement when the policies were swept on both. */
export type CompareReportData = CompareReport & CrossEngineData;

/** What one comparison is narrowed to: unset fields are left to the report (the only one stored). */
export interface CompareNarrowing {
  simCalibration?: string;
  realCalibration?: string;
  episodeSeconds?: number;
}

/** A refusal of the report; `choices` when the operator can make it answerable by picking one. */
export class CompareRefusal extends ApiFailure {
  constructor(
    message: string,
    readonly choices?: ReportChoices,
  ) {
    super(message);
  }
}

export async function fetchCompareReport(
  layoutSet: string,
  policies: readonly number[],
  narrowing: CompareNarrowing = {},
): Promise<CompareReport> {
  const q = new URLSearchParams({ layoutSet });
  if (policies.length > 0) q.set('policies', policies.join(','));
  if (narrowing.simCalibration) q.set('simCalibration', narrowing.simCalibration);
  if (narrowing.realCalibration) q.set('realCalibration', narrowing.realCalibration);
  if (narrowing.episodeSeconds !== undefined) q.set('episodeSeconds', String(narrowing.episodeSeconds));
  // The view says itself when the real side is the emulated cell (a rehearsal, not a result).
  q.set('rehearsals', 'include');
  const res = await fetch(`/api/compare/report?${q.toString()}`, { headers: tokenHeaders(), credentials: 'omit' });
  const data = (await res.json().catch(() => ({ error: `The station answered ${res.status} without a reason.` }))) as
    | CompareReport
    | ApiError;
  if (!res.ok) {
    const e = data as ApiError;
    throw new CompareRefusal(e.error ?? `The station answered ${res.status}.`, e.choices);
  }
  return data as CompareReport;
}
