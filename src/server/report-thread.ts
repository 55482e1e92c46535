/**
 * The paired report for the station API, built on a worker thread: the station's process also
 * runs the rig's control loop, and a report's bootstraps (thousands of resamples per policy) and
 * store reads take from tens of milliseconds to seconds — too long to hold the loop's thread. The
 * thread opens the same store file (SQLite in WAL mode: readers never block the writer) and is
 * started on the first request, then kept.
 */
import { Worker } from 'node:worker_threads';
import { ReportInputError, type ReportChoices } from '../analysis/paired-report.js';
import type { StoredReport, StoredReportOptions } from './report-data.js';

export type ToReportThread = { readonly id: number; readonly storeFile: string; readonly options: StoredReportOptions };
export type FromReportThread = { readonly id: number; readonly ok: true; readonly report: StoredReport } | { readonly id: number; readonly ok: false; readonly inputError: boolean; readonly message: string; readonly choices?: ReportChoices };

export class ReportThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: StoredReport) => void; reject: (e: Error) => void }>();

  constructor(private readonly storeFile: string) {}

  /** The report; rejects with ReportInputError (one sentence for the operator) when it cannot be made as asked. */
  build(options: StoredReportOptions): Promise<StoredReport> {
    const w = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ id, storeFile: this.storeFile, options } satisfies ToReportThread);
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
      if (m.ok) p.resolve(m.report);
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
