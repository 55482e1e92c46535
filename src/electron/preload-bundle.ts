/**
 * The sandboxed preloads must be single CommonJS files (a sandboxed renderer loads no modules but
 * electron's own), so the main process bundles preload.ts and projector-preload.ts with esbuild at
 * start into the shell's own folder — as the station bundles its UI, no build step beforehand.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

export interface Preloads {
  readonly operator: string;
  readonly projector: string;
}

export async function writePreloads(dir: string): Promise<Preloads> {
  mkdirSync(dir, { recursive: true });
  const one = async (name: string): Promise<string> => {
    const out = await build({
      entryPoints: [fileURLToPath(new URL(`./${name}.ts`, import.meta.url))],
      bundle: true,
      write: false,
      format: 'cjs',
      platform: 'browser',
      external: ['electron'],
      target: 'chrome130',
      logLevel: 'silent',
    });
    const file = join(dir, `${name}.cjs`);
    writeFileSync(file, out.outputFiles[0].contents);
    return file;
  };
  return { operator: await one('preload'), projector: await one('projector-preload') };
}
