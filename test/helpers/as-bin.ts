/**
 * A product module as bin/tandem.js would load it: build/'s transpiled copy when it is fresh
 * (scripts/runtime-build.mjs), else the sources. It matters for a module that starts threads (an
 * env server, a sweep): a built worker entry loads plain JavaScript, a source one registers tsx in
 * each new thread, ≈ 1 CPU-s more per thread. Only for a module the test meets through its API and
 * the wire, not one whose classes it compares with `instanceof` against its own source imports.
 */
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from './cli.js';

let built: Promise<string | undefined> | undefined;

/** build/ when it is fresh and TANDEM_FROM_SOURCE is not 1, as bin/tandem.js decides. */
function builtDir(): Promise<string | undefined> {
  built ??= (async () => {
    if (process.env.TANDEM_FROM_SOURCE === '1') return undefined;
    const script = pathToFileURL(`${PROJECT_ROOT}scripts/runtime-build.mjs`).href;
    const { BUILD_DIR, fresh } = (await import(script)) as { BUILD_DIR: string; fresh(): boolean };
    return fresh() ? BUILD_DIR : undefined;
  })();
  return built;
}

/** `fromSource` is the test's own `() => import('../../src/…')` (its types, and the fallback); `path` the same module from the project root. */
export async function importAsBin<T>(path: string, fromSource: () => Promise<T>): Promise<T> {
  const dir = await builtDir();
  return dir === undefined ? fromSource() : ((await import(pathToFileURL(`${dir}/${path}`).href)) as T);
}
