/**
 * An uploaded ONNX model is checked off the station's thread, in a worker with a heap cap and a
 * time limit: a model is untrusted input, and decoding or opening it must not stall or bloat the
 * process that runs the rig's control loop. The worker refuses external data, then opens the model
 * as a rollout would (inputs, outputs, shapes) but without graph optimisation, so no constant is
 * folded — and no tensor a tiny model describes is allocated — at upload time.
 */
import { Worker } from 'node:worker_threads';

export interface OnnxUploadLimits {
  /** The worker's JavaScript heap, MiB (worker resourceLimits). */
  readonly maxHeapMb: number;
  /** The longest a check may take before the worker is stopped. */
  readonly timeoutMs: number;
}

export const DEFAULT_ONNX_UPLOAD_LIMITS: OnnxUploadLimits = { maxHeapMb: 256, timeoutMs: 30_000 };

export type ToOnnxCheck = { readonly file: string; readonly name: string };
export type FromOnnxCheck =
  | { readonly ok: true; readonly sha256: string }
  | { readonly ok: false; readonly reason: string };

/** Checks the model file; resolves with its SHA-256, or a sentence saying why it is refused. */
export function checkOnnxUpload(
  file: string,
  name: string,
  limits: OnnxUploadLimits = DEFAULT_ONNX_UPLOAD_LIMITS,
): Promise<FromOnnxCheck> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL('./onnx-upload-check-entry.mjs', import.meta.url), {
      workerData: { file, name } satisfies ToOnnxCheck,
      resourceLimits: {
        maxOldGenerationSizeMb: limits.maxHeapMb,
        maxYoungGenerationSizeMb: Math.min(32, limits.maxHeapMb),
      },
    });
    let settled = false;
    const done = (r: FromOnnxCheck): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate();
      resolve(r);
    };
    const timer = setTimeout(
      () =>
        done({
          ok: false,
          reason: `The model ${name} took longer than ${limits.timeoutMs >= 1000 ? `${Math.round(limits.timeoutMs / 1000)} s` : `${limits.timeoutMs} ms`} to check, so it was refused.`,
        }),
      limits.timeoutMs,
    );
    worker.on('message', (m: FromOnnxCheck) => done(m));
    worker.on('error', (e: Error & { code?: string }) =>
      done({
        ok: false,
        reason:
          e.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `The model ${name} needed more than ${limits.maxHeapMb} MiB to check, so it was refused.`
            : `The model ${name} could not be checked: ${e.message}`,
      }),
    );
    worker.on('exit', (code) =>
      done({ ok: false, reason: `The model ${name} could not be checked (the checker stopped with code ${code}).` }),
    );
  });
}
