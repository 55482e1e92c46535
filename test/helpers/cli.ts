import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The project's folder (with a trailing slash). The test runner runs the tests transpiled in build/
 * (scripts/runtime-build.mjs): from there the project is one folder up — build/ holds no bin/,
 * docs/ or scripts/.
 */
export const PROJECT_ROOT = existsSync(join(HERE_ROOT, '.built')) ? `${dirname(HERE_ROOT)}/` : HERE_ROOT;
/** bin/tandem.js, the executable a user runs. */
export const BIN = join(PROJECT_ROOT, 'bin', 'tandem.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Environment variables the product reads from `process.env` itself rather than from the command's
 * `io.env` (or that the processes it starts inherit): a test that sets one needs a process of its own.
 */
const PROCESS_ENV_KEYS = new Set([
  'PATH',
  'PYTHONPATH',
  'NODE_OPTIONS',
  'TANDEM_CHROMIUM',
  'TANDEM_FFMPEG',
  'TANDEM_COMMIT',
  'TANDEM_FROM_SOURCE',
]);
const IN_RT_TIER = /\.rt\.test\.[jt]s$/.test(process.argv[1] ?? '');

/**
 * Runs a `tandem` command as the user types it and returns its exit code and output.
 *
 * On the clocked tier the command runs in this process, through the same entry point as
 * bin/tandem.js (`runCli`, with the same io: its own output, environment, working folder and
 * Ctrl-C signal): a child process costs ≈ 1–1.5 CPU-s of start-up and module loading before it does
 * anything, and the suite starts the CLI hundreds of times — minutes of CI's two cores. A child
 * process is still used where the boundary is part of what runs: input on stdin, an environment
 * the product reads from `process.env` or hands to the processes it starts, the real-time tier
 * (a command's loop must not share this thread's timing with the test's emulators), or
 * TANDEM_TEST_CLI=process (to run any file against the real executable).
 */
export function runTandem(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const needsProcess =
    IN_RT_TIER ||
    process.env.TANDEM_TEST_CLI === 'process' ||
    opts.input !== undefined ||
    Object.keys(opts.env ?? {}).some((k) => PROCESS_ENV_KEYS.has(k));
  return needsProcess ? runTandemProcess(args, opts) : runTandemInProcess(args, opts);
}

let builtDir: Promise<string | undefined> | undefined;

/**
 * A product module as bin/tandem.js loads it: build/'s transpiled copy when it is fresh
 * (scripts/runtime-build.mjs; the test runner builds it first), else the sources through tsx.
 * It matters for the threads a command starts: a built worker entry loads plain JavaScript, a
 * source one registers tsx in each new thread and loads the product through it again (≈ 1 CPU-s
 * per thread). Only for modules the test meets through their API, files and the wire — not for
 * classes it compares with `instanceof` against its own source imports (two copies, two classes).
 * `path` is the module from the project root; `fromSource` the test's own import of it (its types).
 */
export async function importAsBin<T>(path: string, fromSource: () => Promise<T>): Promise<T> {
  builtDir ??= (async () => {
    if (process.env.TANDEM_FROM_SOURCE === '1') return undefined;
    const script = pathToFileURL(`${PROJECT_ROOT}scripts/runtime-build.mjs`).href;
    const { BUILD_DIR, fresh } = (await import(script)) as { BUILD_DIR: string; fresh(): boolean };
    return fresh() ? BUILD_DIR : undefined;
  })();
  const dir = await builtDir;
  if (dir === undefined) return fromSource();
  return (await import(pathToFileURL(`${dir}/${path.replace(/\.ts$/, '.js')}`).href)) as T;
}

/**
 * `runCli` in this process with the io bin/tandem.js gives it, loaded as bin/tandem.js loads it (importAsBin). The hang guard aborts it as Ctrl-C
 * would and says so in stderr; unlike a child's SIGKILL it cannot end a command that ignores Ctrl-C.
 */
export async function runTandemInProcess(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliResult> {
  const { runCli } = await importAsBin('src/app/cli.ts', () => import('../../src/app/cli.js'));
  let stdout = '';
  let stderr = '';
  const controller = new AbortController();
  const timeoutMs = opts.timeoutMs ?? 600_000;
  const timer = setTimeout(() => {
    stderr += `\n[test helper: tandem ${args.slice(0, 2).join(' ')} aborted after ${timeoutMs / 1000} s without ending]`;
    controller.abort();
  }, timeoutMs);
  try {
    const code = await runCli(args, {
      out: (t) => void (stdout += t),
      err: (t) => void (stderr += t),
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd ?? PROJECT_ROOT,
      signal: controller.signal,
    });
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/** `runCli` in this process as a test of one command's output (the working folder given, no Ctrl-C, no debug traces). */
export function runInProcess(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runTandemInProcess(args, { cwd, env: { TANDEM_DEBUG: '', ...env } });
}

/** Runs the real `tandem` executable in a child process, as a user would. */
export function runTandemProcess(
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.cwd ?? PROJECT_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    // A hang guard, not a speed limit: on a busy machine (two CPU burners beside the suite) a
    // command may take several times its quiet-machine time and must still pass.
    const timeoutMs = opts.timeoutMs ?? 600_000;
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (killed)
        stderr += `\n[test helper: tandem ${args.slice(0, 2).join(' ')} killed after ${timeoutMs / 1000} s without ending]`;
      resolveRun({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}
