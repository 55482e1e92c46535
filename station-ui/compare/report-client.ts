/**
 * The compare view's request for the paired report (GET /api/compare/report): the same data as
 * `tandem report --json`, typed with src/analysis's PairedReport. Same-origin like every request
 * of station-ui/api.ts, and its refusals arrive the same way: an ApiFailure with the station's
 * sentence (a report that cannot be made as asked says why, in words).
 */
import type { PairedReport } from '../../src/analysis/paired-report.js';
import type { ApiError, CompareReportExtras } from '../../src/server/api-types.js';
import { ApiFailure } from '../api.js';

export type CompareReportData = PairedReport & CompareReportExtras;

export async function fetchCompareReport(layoutSet: string, policies: readonly number[]): Promise<CompareReportData> {
  const q = new URLSearchParams({ layoutSet });
  if (policies.length > 0) q.set('policies', policies.join(','));
  const res = await fetch(`/api/compare/report?${q.toString()}`, { credentials: 'same-origin' });
  const data = (await res.json().catch(() => ({ error: `The station answered ${res.status} without a reason.` }))) as CompareReportData | ApiError;
  if (!res.ok) throw new ApiFailure((data as ApiError).error ?? `The station answered ${res.status}.`);
  return data as CompareReportData;
}
