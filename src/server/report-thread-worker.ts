/** The worker side of ReportThread: opens the store (a second reader beside the station's connection) and builds each report asked for. */
import { parentPort } from 'node:worker_threads';
import { ReportInputError } from '../analysis/paired-report.js';
import { openStore, type Store } from '../store/store.js';
import { stationSimDrift, storedPairedReport } from './report-data.js';
import type { FromReportThread, ToReportThread } from './report-thread.js';

const port = parentPort!;
const stores = new Map<string, Store>();

port.on('message', (m: ToReportThread) => {
  let reply: FromReportThread;
  try {
    let store = stores.get(m.storeFile);
    if (!store) stores.set(m.storeFile, (store = openStore(m.storeFile, { create: false })));
    reply =
      'drift' in m
        ? {
            id: m.id,
            ok: true,
            drift: stationSimDrift(store, {
              ...(m.drift.thresholds ? { thresholds: m.drift.thresholds } : {}),
              excludePolicyIds: new Set(m.drift.excludePolicyIds),
            }),
          }
        : { id: m.id, ok: true, report: storedPairedReport(store, m.options) };
  } catch (e) {
    reply = {
      id: m.id,
      ok: false,
      inputError: e instanceof ReportInputError,
      message: e instanceof Error ? e.message : String(e),
      ...(e instanceof ReportInputError && e.choices ? { choices: e.choices } : {}),
    };
  }
  port.postMessage(reply);
});
