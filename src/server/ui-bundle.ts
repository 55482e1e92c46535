/**
 * The operator UI's files, built once at start-up: station-ui/main.ts bundled by esbuild in memory
 * (no build step before `npm start`, nothing written into the checkout), beside its HTML and CSS.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { PROJECTOR_PAGE_PATH } from './api-types.js';

const UI_DIR = fileURLToPath(new URL('../../station-ui/', import.meta.url));
const PROJECTOR_CSS = fileURLToPath(new URL('../electron/projector.css', import.meta.url));

export interface UiFile {
  readonly type: string;
  readonly body: Buffer;
}

export async function buildUi(): Promise<Map<string, UiFile>> {
  const out = await build({
    entryPoints: { app: `${UI_DIR}main.ts`, projector: `${UI_DIR}projector/projector-page.ts` },
    outdir: '/',
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    sourcemap: false,
    minify: false,
    logLevel: 'silent',
  });
  const js = (name: string): Buffer => Buffer.from(out.outputFiles.find((f) => f.path === `/${name}.js`)!.contents);
  // The projector page's look is the Electron projector window's (one stylesheet for both).
  const [html, css, projectorHtml, projectorCss] = await Promise.all([
    readFile(`${UI_DIR}index.html`),
    readFile(`${UI_DIR}styles.css`),
    readFile(`${UI_DIR}projector/projector.html`),
    readFile(PROJECTOR_CSS),
  ]);
  return new Map<string, UiFile>([
    ['/', { type: 'text/html; charset=utf-8', body: html }],
    ['/app.js', { type: 'text/javascript; charset=utf-8', body: js('app') }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: css }],
    [PROJECTOR_PAGE_PATH, { type: 'text/html; charset=utf-8', body: projectorHtml }],
    ['/projector.js', { type: 'text/javascript; charset=utf-8', body: js('projector') }],
    ['/projector.css', { type: 'text/css; charset=utf-8', body: projectorCss }],
  ]);
}
