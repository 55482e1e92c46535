import { homedir, platform } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The station's data directory: `--data DIR`, else `TANDEM_DATA`, else a per-user default
 * (XDG data home on Linux, Application Support on macOS, %APPDATA% on Windows).
 */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (flag) return resolve(cwd, flag);
  if (env.TANDEM_DATA) return resolve(cwd, env.TANDEM_DATA);
  const os = platform();
  if (os === 'darwin') return join(homedir(), 'Library', 'Application Support', 'tandem');
  if (os === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'tandem');
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'tandem');
}
