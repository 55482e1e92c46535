// The CLI's prebuilt runtime: the product's TypeScript (src, drivers, ros, calibration,
// station-ui) transpiled file by file with esbuild into build/, at the same relative paths, every
// other file copied beside it (HTML, CSS, the .ts sources that esbuild bundles at run time).
//
// Why: through tsx every process spends ≈3 s of CPU before it does anything (each module goes
// through tsx's loader thread, and every module's source map is read); the same code transpiled
// ahead starts in ≈1 s. The tests start the CLI hundreds of times, a station starts its policy
// servers and workers — on CI's 2 cores that was minutes. esbuild is what tsx itself transpiles
// with, so the code that runs is the same.
//
// bin/tandem.js runs build/ only while it is newer than every source file (fresh()); a fresh
// clone, an edited or added file, or TANDEM_FROM_SOURCE=1 runs the sources through tsx as before.
// `npm test` and `npm start` build first (npm run build, ≈2 s).
//
// The tests are built too (build/test/), and the test runner runs them from there: through tsx each
// test file's process paid ≈ 0.7 CPU-s more to load the same modules (≈ 160 CPU-s over the suite on
// CI's 2 cores), and a test that started the CLI in-process loaded the product twice — its own
// imports through tsx and the CLI from build/. Test files carry inline source maps, so a failure's
// stack names the test's own lines (node --enable-source-maps); the product's do not, to keep every
// CLI start as cheap as it was.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BUILD_DIR = join(ROOT, 'build');
const SOURCE_DIRS = ['src', 'drivers', 'ros', 'calibration', 'station-ui', 'test'];
const MAPPED_DIRS = ['test'];
const LINKED_DIRS = ['scripts'];
const STAMP_NAME = '.built';

function walk(dir, out = []) {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    if (name.name === 'node_modules' || name.name === 'dist') continue;
    const p = join(dir, name.name);
    if (name.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

function sourceFiles(root) {
  return SOURCE_DIRS.map((d) => join(root, d))
    .filter((d) => existsSync(d))
    .flatMap((d) => walk(d));
}

/** What the stamp says: the sources the build was made from (a deleted one makes it stale). */
function stampText(root, files = sourceFiles(root)) {
  return `${files.map((f) => relative(root, f)).join('\n')}\n`;
}

/** A worker entry registers tsx and imports its TypeScript worker: built, it imports the .js beside it. */
function builtEntry(text) {
  return text
    .replace(/^import \{ register \} from 'tsx\/esm\/api';\s*\n(?:\s*\n)*register\(\);\s*\n/m, '')
    .replace(/await import\('(\.[^']+)\.ts'\);/g, "await import('$1.js');");
}

/** Builds build/ afresh (into a sibling folder first, so a half-written build is never run). */
export async function buildRuntime(root = ROOT) {
  const { transform } = await import('esbuild');
  const out0 = join(root, 'build');
  const tmp = `${out0}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  let transpiled = 0;
  // The file list and the time are taken before the first file is read: a source added or edited
  // while the build runs (a checkout, a merge) leaves the build stale instead of half new.
  const startedS = Date.now() / 1000;
  const files = sourceFiles(root);
  for (const file of files) {
    const rel = relative(root, file);
    const out = join(tmp, rel);
    mkdirSync(dirname(out), { recursive: true });
    copyFileSync(file, out);
    if (file.endsWith('.ts') && !file.endsWith('.d.ts')) {
      const r = await transform(readFileSync(file, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        // A mapped file's map names its source as seen from the built file, so stacks show test/….ts.
        ...(MAPPED_DIRS.some((d) => rel.startsWith(`${d}/`))
          ? { sourcefile: relative(dirname(join(out0, rel)), file), sourcemap: 'inline', sourcesContent: false }
          : { sourcefile: rel }),
      });
      writeFileSync(out.replace(/\.ts$/, '.js'), r.code);
      transpiled += 1;
    } else if (/-entry\.mjs$/.test(file)) {
      writeFileSync(out, builtEntry(readFileSync(file, 'utf8')));
    }
  }
  // version.ts and the queue's job read the package.json two or three folders up, as in the sources.
  copyFileSync(join(root, 'package.json'), join(tmp, 'package.json'));
  // The built tests import the runner's scripts by relative path (../../scripts/…): links to the
  // project's own folders, which node follows to the real files (their import.meta.url is the real one).
  for (const dir of LINKED_DIRS) if (existsSync(join(root, dir))) symlinkSync(join('..', dir), join(tmp, dir), 'dir');
  writeFileSync(join(tmp, STAMP_NAME), stampText(root, files));
  utimesSync(join(tmp, STAMP_NAME), startedS, startedS);
  rmSync(out0, { recursive: true, force: true });
  renameSync(tmp, out0);
  return transpiled;
}

/** True when build/ exists and is newer than every source file and every input of the build. */
export function fresh(root = ROOT, buildInputs = [fileURLToPath(import.meta.url)]) {
  const stamp = join(root, 'build', STAMP_NAME);
  let built;
  try {
    built = statSync(stamp).mtimeMs;
  } catch {
    return false;
  }
  // Besides the sources, package.json (copied) and this script (how the build is made).
  for (const f of [join(root, 'package.json'), ...buildInputs, ...sourceFiles(root)])
    if (statSync(f).mtimeMs > built) return false;
  return readFileSync(stamp, 'utf8') === stampText(root);
}

if (
  process.argv[1] &&
  fileURLToPath(import.meta.url) === process.argv[1] &&
  !(process.argv.includes('--if-stale') && fresh())
) {
  const t0 = performance.now();
  const n = await buildRuntime();
  if (!process.argv.includes('--quiet'))
    console.log(
      `built ${relative(ROOT, BUILD_DIR)}/: ${n} TypeScript files transpiled in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
}
