/**
 * Which tandem this is, for every episode file's metadata: the package version, and the git commit
 * when running from a checkout (TANDEM_COMMIT overrides, for packaged builds that know theirs).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let cached: { version: string; commit: string } | undefined;

export function tandemVersion(env: NodeJS.ProcessEnv = process.env): { version: string; commit: string } {
  if (cached) return cached;
  let version = 'unknown';
  try {
    version = String(
      (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version?: unknown }).version ?? 'unknown',
    );
  } catch {
    // a packaged build without package.json beside it: the version stays unknown, said so
  }
  let commit = env.TANDEM_COMMIT ?? '';
  if (!commit) {
    try {
      commit = execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: ROOT,
        timeout: 2000,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .toString()
        .trim();
      const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
        cwd: ROOT,
        timeout: 2000,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .toString()
        .trim();
      if (dirty) commit += '+modified';
    } catch {
      commit = 'unknown';
    }
  }
  cached = { version, commit };
  return cached;
}
