/**
 * The paired report for the station API, built on a worker thread: the station's process also
 * runs the rig's control loop, and a report's bootstraps (thousands of resamples per policy) and
 * store reads take from tens of milliseconds to seconds — too long to hold the loop's thread. The
 * thread opens the same store file (SQLite in WAL mode: readers never block the writer) and is
 * started on the first request, then kept.
 */
import { Worker } from 'node:worker_threads';
import { ReportInputError, type ReportChoices } from '../analysis/paired-report.js';
import type { StationSimDrift, StoredReport, StoredReportOptions } from './report-data.js';
import type { DriftThresholds } from '../analysis/sim-drift.js';

export type DriftRequest = {
  readonly thresholds?: Partial<DriftThresholds>;
  readonly excludePolicyIds: readonly number[];
};
export type ToReportThread =
  | { readonly id: number; readonly storeFile: string; readonly options: StoredReportOptions }
  | { readonly id: number; readonly storeFile: string; readonly drift: DriftRequest };
export type FromReportThread =
  | { readonly id: number; readonly ok: true; readonly report: StoredReport }
  | { readonly id: number; readonly ok: true; readonly drift: StationSimDrift }
  | {
      readonly id: number;
      readonly ok: false;
      readonly inputError: boolean;
      readonly message: string;
      readonly choices?: ReportChoices;
    };

export class ReportThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: never) => void; reject: (e: Error) => void }>();

  constructor(private readonly storeFile: string) {}

  /** The report; rejects with ReportInputError (one sentence for the operator) when it cannot be made as asked. */
  build(options: StoredReportOptions): Promise<StoredReport> {
    return this.ask<StoredReport>((id) => ({ id, storeFile: this.storeFile, options }));
  }

  /** The sim-twin drift of every layout set with real rollouts (the Rig page's alarm). */
  drift(request: DriftRequest): Promise<StationSimDrift> {
    return this.ask<StationSimDrift>((id) => ({ id, storeFile: this.storeFile, drift: request }));
  }

  private ask<T>(message: (id: number) => ToReportThread): Promise<T> {
    const w = this.started();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (r: never) => void, reject });
      w.postMessage(message(id));
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./report-thread-entry.mjs', import.meta.url));
    // An idle report thread does not keep the station's process alive.
    w.unref();
    w.on('message', (m: FromReportThread) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(('report' in m ? m.report : m.drift) as never);
      else p.reject(m.inputError ? new ReportInputError(m.message, m.choices) : new Error(m.message));
    });
    const gone = (why: string): void => {
      if (this.worker === w) this.worker = undefined;
      for (const p of this.pending.values()) p.reject(new Error(`The report thread stopped (${why}).`));
      this.pending.clear();
    };
    w.on('error', (e) => gone(e.message));
    w.on('exit', (code) => gone(`exit code ${code}`));
    this.worker = w;
    return w;
  }
}
