import { runCli } from '../../src/app/cli.js';
import type { CliResult } from '../helpers/cli.js';

/**
 * Runs the same CLI entry point as bin/tandem.js inside this process, capturing its output.
 * For the many bad-input cases: each child process costs a second of CPU on a shared machine;
 * the tests that depend on a real process (hashes across processes, exit codes) use runTandem.
 */
export async function runInProcess(argv: readonly string[], cwd: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    env: { ...process.env, TANDEM_DEBUG: '' },
    cwd,
    signal: new AbortController().signal,
  });
  return { code, stdout, stderr };
}
