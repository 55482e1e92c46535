/**
 * The operator UI's files, built once at start-up: station-ui/main.ts bundled by esbuild in memory
 * (no build step before `npm start`, nothing written into the checkout), beside its HTML and CSS.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const UI_DIR = fileURLToPath(new URL('../../station-ui/', import.meta.url));

export interface UiFile {
  readonly type: string;
  readonly body: Buffer;
}

export async function buildUi(): Promise<Map<string, UiFile>> {
  const out = await build({
    entryPoints: [`${UI_DIR}main.ts`],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    sourcemap: false,
    minify: false,
    logLevel: 'silent',
  });
  const [html, css] = await Promise.all([readFile(`${UI_DIR}index.html`), readFile(`${UI_DIR}styles.css`)]);
  return new Map<string, UiFile>([
    ['/', { type: 'text/html; charset=utf-8', body: html }],
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(out.outputFiles[0].contents) }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: css }],
  ]);
}
