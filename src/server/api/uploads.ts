/**
 * Uploads: what the station accepts as user files, and how big. Pure (no Node built-ins): the
 * server and the operator UI share it; src/server/api-types.ts gathers every feature.
 */

/** What can be uploaded, and the most bytes the station takes for each (said in the refusal). */
export const UPLOAD_LIMITS = {
  'layout-set': { bytes: 8 * 1024 * 1024, what: 'A layout set' },
  'sim-calibration': { bytes: 1024 * 1024, what: 'A sim calibration' },
  policy: { bytes: 256 * 1024 * 1024, what: 'A policy (ONNX model)' },
} as const;

export type UploadKind = keyof typeof UPLOAD_LIMITS;

/** "8 MiB", "256 MiB", "1.5 MiB". */
export function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return `${Number.isInteger(m) ? m : m.toFixed(1)} MiB`;
}

/** The refusal of a file over its kind's limit: the same sentence from the UI's check and the server's. */
export function tooBigSentence(kind: UploadKind, bytes: number): string {
  const l = UPLOAD_LIMITS[kind];
  return `${l.what} upload is at most ${mib(l.bytes)}; this file is ${mib(bytes)}.`;
}

export interface UploadResult {
  readonly kind: UploadKind;
  /** The stored item's id: the layout set's or calibration's SHA-256, or the model file's. */
  readonly sha256: string;
  /** What it is, in words ("bottles-in-the-bin v1, 6 layouts"). */
  readonly summary: string;
  /** For a policy: the spec that runs it (onnx:PATH), for the rollout and session forms. */
  readonly spec?: string;
  /** False when the same item was in the store already. */
  readonly inserted: boolean;
}
