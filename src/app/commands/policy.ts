import {
  intOption,
  numberOption,
  requireString,
  UserError,
  type CliCommand,
  type CliIo,
  type ParsedCommandArgs,
} from '../command.js';
import { STATE_DIM } from '../../rig/contract.js';
import { yamRigModel } from '../../rig/yam.js';
import { PolicyUnavailableError, type InferenceTiming, type Policy } from '../../policy/contract.js';
import { InvalidActionError, validateActionChunk } from '../../policy/actions.js';
import { PolicyLoadError } from '../../policy/errors.js';
import { InvalidObservationError, syntheticObservation } from '../../policy/observation.js';
import { openPolicySpec } from '../../policy/spec.js';

/** Exit code when the policy (server) is unreachable, slow or broken, as opposed to bad input (2). */
const EXIT_UNAVAILABLE = 3;

function asUserError(e: unknown): unknown {
  if (e instanceof PolicyLoadError || e instanceof InvalidObservationError || e instanceof InvalidActionError)
    return new UserError(e.message);
  if (e instanceof PolicyUnavailableError) return new UserError(e.message, EXIT_UNAVAILABLE);
  return e;
}

async function openFromArgs(spec: string, args: ParsedCommandArgs, io: CliIo): Promise<Policy> {
  const apiKey = typeof args.values['api-key'] === 'string' ? args.values['api-key'] : io.env.TANDEM_POLICY_API_KEY;
  try {
    return await openPolicySpec(spec, {
      cwd: io.cwd,
      apiKey,
      connectTimeoutMs: intOption(args, 'connect-timeout-ms', 5000, 1, 600_000),
      inferenceTimeoutMs: intOption(args, 'timeout-ms', 10_000, 1, 600_000),
      onnxThreads: intOption(args, 'onnx-threads', 1, 1, 256),
    });
  } catch (e) {
    throw asUserError(e);
  }
}

const round = (x: number | undefined): number | undefined =>
  x === undefined ? undefined : Math.round(x * 1000) / 1000;

function latencyJson(t: InferenceTiming | undefined, wallMs: number): Record<string, number> {
  const out: Record<string, number | undefined> = {
    total: round(t?.totalMs ?? wallMs),
    encode: round(t?.encodeMs),
    network: round(t?.networkMs),
    server: round(t?.serverMs),
    model: round(t?.modelMs),
    decode: round(t?.decodeMs),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Record<string, number>;
}

const probe: CliCommand = {
  path: ['policy', 'probe'],
  summary: 'connect to a policy, print its metadata, run one inference on a synthetic observation',
  help: `Usage: tandem policy probe SPEC [--json] [--api-key KEY] [--timeout-ms N] [--connect-timeout-ms N]

SPEC is onnx:path/to/model.onnx or ws://host:port (an openpi-compatible server, e.g. 'tandem policy serve').
The observation has three 224×224 cameras (cam_high, cam_left_wrist, cam_right_wrist), a 14-entry state
and a prompt. Prints the metadata, the action shape [H, 14] and where the time went
(encode, network, server, model, decode, in ms).

  --api-key KEY            sent as 'Authorization: Api-Key KEY' (default: $TANDEM_POLICY_API_KEY)
  --prompt TEXT            the instruction (default: 'put the bottles in the bin')
  --timeout-ms N           inference deadline (default 10000)
  --connect-timeout-ms N   connect and metadata deadline (default 5000)
  --onnx-threads N         threads onnxruntime uses inside one inference (default 1)
Exit codes: 0 ok, 2 bad input (spec, model, actions out of the rig's range), 3 policy unavailable (unreachable,
timeout, server error, an answer that is not an openpi action message).`,
  options: {
    'api-key': { type: 'string' },
    prompt: { type: 'string' },
    'timeout-ms': { type: 'string' },
    'connect-timeout-ms': { type: 'string' },
    'onnx-threads': { type: 'string' },
  },
  positionals: [1, 1],
  async run(args, io) {
    const spec = args.positionals[0];
    const policy = await openFromArgs(spec, args, io);
    try {
      // Loaded here, not at start-up: every tandem command would otherwise pay for ws and friends.
      const { OpenpiClientPolicy } = await import('../../policy/openpi/client.js');
      const { wireToJson } = await import('../../policy/openpi/msgpack-numpy.js');
      const metadata =
        policy instanceof OpenpiClientPolicy
          ? (wireToJson(policy.metadata) as Record<string, unknown>)
          : { ...policy.info };
      const obs = syntheticObservation({
        size: 224,
        prompt: typeof args.values.prompt === 'string' ? args.values.prompt : undefined,
      });
      const t0 = performance.now();
      let chunk;
      try {
        await policy.reset({ seed: 0, prompt: obs.prompt, rigModel: yamRigModel(), controlHz: 50 });
        chunk = await policy.infer(obs);
        validateActionChunk(chunk, policy.info.name);
      } catch (e) {
        throw asUserError(e);
      }
      const wallMs = performance.now() - t0;
      const info = policy.info;
      const latencyMs = latencyJson(chunk.timing, wallMs);
      if (args.values.json) {
        io.out(
          `${JSON.stringify({ spec, policy: { name: info.name, checkpointSha256: info.checkpointSha256, actionHorizon: info.actionHorizon, cameras: info.cameras }, metadata, actionShape: [chunk.horizon, STATE_DIM], latencyMs }, null, 2)}\n`,
        );
      } else {
        const split = Object.entries(latencyMs)
          .filter(([k]) => k !== 'total')
          .map(([k, v]) => `${k} ${v.toFixed(2)}`)
          .join(', ');
        io.out(
          `Policy     ${info.name}\nCheckpoint ${info.checkpointSha256}\nMetadata   ${JSON.stringify(metadata)}\nActions    [${chunk.horizon}, ${STATE_DIM}]\nLatency    ${latencyMs.total.toFixed(2)} ms${split ? ` (${split})` : ''}\n`,
        );
      }
    } finally {
      await policy.close?.();
    }
  },
};

const serve: CliCommand = {
  path: ['policy', 'serve'],
  summary: 'serve a policy over the openpi websocket protocol (shared by sim workers and openpi clients)',
  help: `Usage: tandem policy serve --policy SPEC [--port P] [--host H] [--api-key KEY] [--added-latency-ms N]

Loads SPEC (onnx:path/to/model.onnx, or ws://host:port to relay another server) once and serves it
as openpi does: metadata message first, msgpack-numpy requests/responses, GET /healthz, errors as a
text frame followed by close 1011. Stops on Ctrl-C.

  --port P                 port (default 8000, openpi's; 0 picks a free one and prints it)
  --host H                 interface (default 127.0.0.1; 0.0.0.0 serves other machines, and then needs --api-key)
  --api-key KEY            require 'Authorization: Api-Key KEY' (default: $TANDEM_POLICY_API_KEY, else none on loopback)
Browser pages (any request with an Origin) are refused.
  --added-latency-ms N     wait N ms before each answer, to rehearse a heavier model's latency
  --max-image-side N       largest image height/width a request may carry (default 1024, at most 8192);
                           bounds every request before it is read (larger messages: close 1009)
  --onnx-threads N         threads onnxruntime uses inside one inference (default 1; raise for large models)
A request that is not an openpi ALOHA observation (unknown keys, wrong shapes, forged arrays) gets
one sentence as a text frame, then close 1011, as openpi's server reports errors.`,
  options: {
    policy: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'added-latency-ms': { type: 'string' },
    'max-image-side': { type: 'string' },
    'timeout-ms': { type: 'string' },
    'connect-timeout-ms': { type: 'string' },
    'onnx-threads': { type: 'string' },
  },
  async run(args, io) {
    const spec = requireString(args, 'policy');
    const port = intOption(args, 'port', 8000, 0, 65535);
    const addedLatencyMs = numberOption(args, 'added-latency-ms', 0, 0, 60_000);
    // 8192: the largest side validateImage takes anywhere in tandem.
    const maxImageSide = intOption(args, 'max-image-side', 1024, 16, 8192);
    const host = typeof args.values.host === 'string' ? args.values.host : '127.0.0.1';
    const apiKey = typeof args.values['api-key'] === 'string' ? args.values['api-key'] : io.env.TANDEM_POLICY_API_KEY;
    const { openHostRefusal, startPolicyServer } = await import('../../policy/openpi/server.js');
    const refusal = openHostRefusal(host, apiKey || undefined);
    if (refusal) throw new UserError(refusal);
    const policy = await openFromArgs(spec, { ...args, values: { ...args.values, 'api-key': undefined } }, io);
    let server;
    try {
      server = await startPolicyServer({
        policy,
        port,
        host,
        apiKey: apiKey || undefined,
        addedLatencyMs,
        maxImageSide,
        resetContext: { seed: 0, prompt: '', rigModel: yamRigModel(), controlHz: 50 },
        log: (line) => io.err(`${line}\n`),
      });
    } catch (e) {
      await policy.close?.();
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE')
        throw new UserError(`Port ${port} on ${host} is already in use; pick another with --port.`);
      if (code === 'EACCES')
        throw new UserError(`Not allowed to listen on port ${port}; pick a port above 1023 with --port.`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
        throw new UserError(`Cannot listen on host '${host}'; it is not an address of this machine.`);
      throw e;
    }
    const info = policy.info;
    io.out(
      `Serving ${info.name} (checkpoint ${info.checkpointSha256.slice(0, 12)}, horizon ${info.actionHorizon}) on ${server.url}${apiKey ? ' (API key required)' : ''}\n`,
    );
    io.out(
      `Health check: http://${host.includes(':') ? `[${host}]` : host}:${server.port}/healthz — stop with Ctrl-C.\n`,
    );
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
    await policy.close?.();
    io.out(`Stopped after ${server.served()} inference${server.served() === 1 ? '' : 's'}.\n`);
  },
};

export const commands: CliCommand[] = [probe, serve];
