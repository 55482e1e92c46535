/** The worker side of checkOnnxUpload: no external data, then open the model as a rollout would, unoptimised. */
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { checkNoExternalData } from '../policy/onnx/external-data.js';
import { OnnxPolicy } from '../policy/onnx/onnx-policy.js';
import { PolicyLoadError } from '../policy/errors.js';
import type { FromOnnxCheck, ToOnnxCheck } from './onnx-upload-check.js';

const { file, name } = workerData as ToOnnxCheck;

async function check(): Promise<FromOnnxCheck> {
  const bytes = await readFile(file);
  const external = checkNoExternalData(bytes);
  // Not a model at all: onnxruntime's own refusal says so in the words the CLI uses.
  if (!external.ok && !external.undecodable)
    return { ok: false, reason: `The model ${name} is refused: ${external.reason}.` };
  try {
    const policy = await OnnxPolicy.load(file, { optimize: false });
    if (!external.ok) {
      await policy.close();
      return { ok: false, reason: `The model ${name} is refused: ${external.reason}.` };
    }
    const sha256 = policy.info.checkpointSha256;
    await policy.close();
    return { ok: true, sha256 };
  } catch (e) {
    if (e instanceof PolicyLoadError) return { ok: false, reason: e.message.split(file).join(name) };
    throw e;
  }
}

parentPort!.postMessage(await check());
