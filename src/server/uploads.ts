/**
 * Uploads through the API: layout sets, sim calibrations and policies (ONNX models). Each is
 * size-limited before it is read whole (the limit said in the refusal), checked with the same
 * validator the CLI uses — the layout set's own hash, the sim calibration file parser, onnxruntime
 * loading the model (in a capped worker, external data refused) — and only then stored. A refusal is one sentence and stores nothing.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import type { Store } from '../store/store.js';
import { parseLayoutSet } from '../layouts/layout-set.js';
import { LayoutSetError } from '../layouts/errors.js';
import { CalibrationFileError, parseSimCalibration } from '../sim/calibration-file.js';
import { SIM_CALIBRATION_KIND, simCalibrationHash, simCalibrationJson } from '../sim/calibration.js';
import { checkOnnxUpload, DEFAULT_ONNX_UPLOAD_LIMITS, type OnnxUploadLimits } from './onnx-upload-check.js';
import { tooBigSentence, UPLOAD_LIMITS, type UploadKind, type UploadResult } from './api-types.js';
import { ApiRefusal, readLimitedBody } from './request-checks.js';

export const UPLOAD_KINDS = Object.keys(UPLOAD_LIMITS) as UploadKind[];

/** The file's name from `?name=`, as something safe to keep in a file name and to show. */
export function uploadName(raw: string | null, kind: UploadKind): string {
  const name = (raw ?? '')
    .split(/[\\/]/)
    .pop()!
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+/, '')
    .slice(0, 100);
  if (kind === 'policy' && !/\.onnx$/i.test(name))
    throw new ApiRefusal(
      400,
      `A policy upload is an ONNX model: give its file name ending in .onnx (?name=model.onnx), not '${(raw ?? '').slice(0, 80)}'.`,
    );
  return name || `${kind}.json`;
}

/** Reads the body, refusing it once it passes the kind's limit (the rest is read and dropped, never kept). */
export async function readUpload(req: IncomingMessage, kind: UploadKind): Promise<Buffer> {
  const body = await readLimitedBody(req, UPLOAD_LIMITS[kind].bytes, (bytes) => tooBigSentence(kind, bytes));
  if (body.length === 0)
    throw new ApiRefusal(400, `${UPLOAD_LIMITS[kind].what} upload arrived empty; choose the file again.`);
  return body;
}

export async function storeUpload(
  store: Store,
  dataDir: string,
  kind: UploadKind,
  name: string,
  body: Buffer,
  limits: OnnxUploadLimits = DEFAULT_ONNX_UPLOAD_LIMITS,
): Promise<UploadResult> {
  if (kind === 'layout-set') {
    let set;
    try {
      set = parseLayoutSet(body.toString('utf8'), name);
    } catch (e) {
      if (e instanceof LayoutSetError) throw new ApiRefusal(400, e.message);
      throw e;
    }
    const { inserted } = store.putLayoutSet(set);
    return {
      kind,
      sha256: set.sha256,
      summary: `${set.task} v${set.version}, ${set.layouts.length} layout${set.layouts.length === 1 ? '' : 's'}`,
      inserted,
    };
  }
  if (kind === 'sim-calibration') {
    let cal;
    try {
      cal = parseSimCalibration(body.toString('utf8'), name);
    } catch (e) {
      if (e instanceof CalibrationFileError) throw new ApiRefusal(400, e.message);
      throw e;
    }
    const sha256 = simCalibrationHash(cal);
    const { inserted } = store.putCalibration({
      sha256,
      kind: SIM_CALIBRATION_KIND,
      version: cal.version,
      canonicalJson: simCalibrationJson(cal),
    });
    return { kind, sha256, summary: `sim calibration '${cal.name}' v${cal.version}`, inserted };
  }
  // A policy: written beside the others, loaded by onnxruntime as a rollout would load it, kept only if it loads.
  const dir = join(dataDir, 'policies');
  // Uploaded models are the operator's: readable by this user only.
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = join(dir, `.upload-${randomBytes(6).toString('hex')}.onnx`);
  await writeFile(temp, body, { mode: 0o600 });
  // Checked in a worker with a heap cap and a time limit (onnx-upload-check.ts): an upload is untrusted.
  const checked = await checkOnnxUpload(temp, name, limits);
  if (!checked.ok) {
    await rm(temp, { force: true });
    throw new ApiRefusal(400, checked.reason.split(temp).join(name).split('.upload-').join(''));
  }
  const sha256 = checked.sha256;
  const file = join(dir, `${sha256.slice(0, 12)}-${name}`);
  await rename(temp, file);
  const spec = `onnx:${file}`;
  const before = store.listPolicies().some((p) => p.spec === spec);
  store.upsertPolicy({ spec, name: `onnx:${name}`, checkpointSha256: sha256 });
  return {
    kind,
    sha256,
    summary: `ONNX model ${name} (${(body.length / 1024).toFixed(0)} KiB)`,
    spec,
    inserted: !before,
  };
}
