/**
 * The CLI's prebuilt runtime (scripts/runtime-build.mjs): bin/tandem.js runs build/ only while it
 * is what the sources say. A stale build running old code would be worse than a slow start, so
 * every way of going stale is checked on a small project of its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain .mjs script without type declarations
import { buildRuntime, fresh } from '../../scripts/runtime-build.mjs';

function project(t: { after(fn: () => void): void }): string {
  const root = mkdtempSync(join(tmpdir(), 'tandem-runtime-build-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'src', 'app'), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{"name":"p","version":"1.2.3","type":"module"}\n');
  writeFileSync(join(root, 'src', 'app', 'answer.ts'), 'export const answer: number = 41 + 1;\n');
  writeFileSync(
    join(root, 'src', 'app', 'main.ts'),
    "import { answer } from './answer.js';\nconst n: number = answer;\nconsole.log(`answer ${n}`);\n",
  );
  writeFileSync(join(root, 'src', 'app', 'page.html'), '<p>kept as it is</p>\n');
  writeFileSync(
    join(root, 'src', 'app', 'work-entry.mjs'),
    "// entry\nimport { register } from 'tsx/esm/api';\n\nregister();\nawait import('./answer.ts');\n",
  );
  // Written two minutes ago, so the tests can date a build between them and an edit.
  const old = new Date(Date.now() - 120_000);
  for (const f of [
    'package.json',
    'src/app/answer.ts',
    'src/app/main.ts',
    'src/app/page.html',
    'src/app/work-entry.mjs',
  ])
    utimesSync(join(root, f), old, old);
  return root;
}

/** Builds, then dates the build a minute back: any file written from now on is an edit after it. */
async function buildBefore(root: string): Promise<void> {
  await buildRuntime(root);
  const before = new Date(Date.now() - 60_000);
  utimesSync(join(root, 'build', '.built'), before, before);
}

test('the build transpiles the sources to plain JavaScript that node runs without tsx, and copies the rest', async (t) => {
  const root = project(t);
  assert.equal(fresh(root, []), false, 'no build yet');
  assert.equal(await buildRuntime(root), 2);
  assert.equal(fresh(root, []), true);
  assert.equal(
    execFileSync(process.execPath, [join(root, 'build', 'src', 'app', 'main.js')], { encoding: 'utf8' }),
    'answer 42\n',
  );
  assert.equal(readFileSync(join(root, 'build', 'src', 'app', 'page.html'), 'utf8'), '<p>kept as it is</p>\n');
  assert.equal(
    readFileSync(join(root, 'build', 'package.json'), 'utf8'),
    readFileSync(join(root, 'package.json'), 'utf8'),
  );
  // A worker entry no longer registers tsx and imports the built file.
  const entry = readFileSync(join(root, 'build', 'src', 'app', 'work-entry.mjs'), 'utf8');
  assert.doesNotMatch(entry, /tsx/);
  assert.match(entry, /await import\('\.\/answer\.js'\);/);
});

test('an edited, added or deleted source file, or a changed package.json, makes the build stale', async (t) => {
  const root = project(t);
  const answer = join(root, 'src', 'app', 'answer.ts');
  await buildBefore(root);
  assert.equal(fresh(root, []), true, 'built after every source');
  writeFileSync(answer, 'export const answer: number = 43;\n');
  assert.equal(fresh(root, []), false, 'edited');
  await buildBefore(root);
  writeFileSync(join(root, 'src', 'app', 'new.ts'), 'export {};\n');
  assert.equal(fresh(root, []), false, 'added');
  await buildRuntime(root);
  assert.equal(fresh(root, []), true);
  assert.equal(
    execFileSync(process.execPath, [join(root, 'build', 'src', 'app', 'main.js')], { encoding: 'utf8' }),
    'answer 43\n',
    'the rebuild runs the edit',
  );
  rmSync(join(root, 'src', 'app', 'new.ts'));
  assert.equal(fresh(root, []), false, 'deleted: its old build must not run');
  await buildBefore(root);
  writeFileSync(join(root, 'package.json'), '{"name":"p","version":"1.2.4","type":"module"}\n');
  assert.equal(fresh(root, []), false, 'package.json');
});
