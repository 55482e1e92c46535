/**
 * Policy specs the policy runtime opens: `onnx:path/to/model.onnx` (relative to cwd) and
 * `ws://host:port` / `wss://host:port` (an openpi-compatible server). Other schemes (code
 * policies) belong to the rollout's policy registry, which calls this for these two.
 * The runtimes load on first use: onnxruntime, sharp and ws cost about a second of start-up
 * that commands which never open a policy should not pay.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Policy } from './contract.js';
import { PolicyLoadError } from './errors.js';

export interface PolicySpecOptions {
  /** Base for relative model paths. */
  readonly cwd: string;
  /** Sent as `Authorization: Api-Key <key>` to remote servers. */
  readonly apiKey?: string;
  readonly connectTimeoutMs?: number;
  readonly inferenceTimeoutMs?: number;
  /** Threads onnxruntime may use inside one inference (default 1). */
  readonly onnxThreads?: number;
}

/** True for the specs this module opens (onnx:, ws://, wss://). */
export function isRuntimePolicySpec(spec: string): boolean {
  return /^onnx:/.test(spec) || /^wss?:\/\//.test(spec);
}

/** Opens a policy; throws PolicyLoadError (bad spec or model) or PolicyUnavailableError (server unreachable). */
export async function openPolicySpec(spec: string, opts: PolicySpecOptions): Promise<Policy> {
  if (spec.startsWith('onnx:')) {
    const path = spec.slice('onnx:'.length);
    if (path.length === 0)
      throw new PolicyLoadError(`Policy spec '${spec}' names no model file; write onnx:path/to/model.onnx.`);
    const { OnnxPolicy } = await import('./onnx/onnx-policy.js');
    return OnnxPolicy.load(isAbsolute(path) ? path : resolve(opts.cwd, path), { threads: opts.onnxThreads });
  }
  if (/^wss?:\/\//.test(spec)) {
    let url: URL;
    try {
      url = new URL(spec);
    } catch {
      throw new PolicyLoadError(`Policy spec '${spec}' is not a valid websocket address; write ws://host:port.`);
    }
    if (url.hostname === '') throw new PolicyLoadError(`Policy spec '${spec}' names no host; write ws://host:port.`);
    const { OpenpiClientPolicy } = await import('./openpi/client.js');
    return OpenpiClientPolicy.connect({
      url: url.href.replace(/\/$/, ''),
      apiKey: opts.apiKey,
      connectTimeoutMs: opts.connectTimeoutMs,
      inferenceTimeoutMs: opts.inferenceTimeoutMs,
    });
  }
  throw new PolicyLoadError(
    `Policy spec '${spec}' is not one the policy runtime opens; use onnx:path/to/model.onnx or ws://host:port.`,
  );
}
