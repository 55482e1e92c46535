#!/usr/bin/env node
// Fails when modules import each other in a circle (A → B → … → A), listing each circle found.
// A circle makes load order matter (a module can see another half-initialised) and means two
// rooms, or two modules of one, are really one thing; the lint rule `tandem/rooms` keeps rooms in
// order but cannot see a circle inside a room. Static imports and re-exports count, type-only
// ones too (they say the same about the design); `import()` does not (it loads later, on purpose).
// Hand-written rather than eslint-plugin-import's no-cycle: that plugin is not installed, and this
// parses the tree once with TypeScript's own parser (about 3 CPU-seconds), where no-cycle's cost grows
// with every file it lints.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIRS = ['src', 'drivers', 'ros', 'calibration', 'station-ui', 'bench', 'test', 'scripts', 'bin'];
const SKIP = new Set(['node_modules', 'build', 'dist']);
const EXT = /\.(ts|tsx|mts|js|mjs)$/;

function walk(dir, out) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (SKIP.has(name) || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (EXT.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = DIRS.flatMap((d) => walk(join(root, d), []));
const known = new Set(files);

/** The file a relative specifier names: TypeScript sources are imported by their emitted `.js` name. */
function resolveSpecifier(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec);
  const candidates = [
    base,
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    base.replace(/\.mjs$/, '.mts'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ];
  return candidates.find((c) => known.has(c));
}

/** Static imports and re-exports of one file. */
function importsOf(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out = new Set();
  for (const s of source.statements) {
    const spec =
      (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
      s.moduleSpecifier &&
      ts.isStringLiteral(s.moduleSpecifier)
        ? s.moduleSpecifier.text
        : undefined;
    const to = spec && resolveSpecifier(file, spec);
    if (to && to !== file) out.add(to);
  }
  return [...out];
}

const graph = new Map(files.map((f) => [f, importsOf(f)]));

// Tarjan's strongly connected components, iteratively (deep chains would overflow recursion).
let counter = 0;
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
const circles = [];
for (const start of files) {
  if (index.has(start)) continue;
  const work = [{ v: start, i: 0 }];
  index.set(start, counter);
  low.set(start, counter++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const top = work[work.length - 1];
    const next = graph.get(top.v)[top.i++];
    if (next !== undefined) {
      if (!index.has(next)) {
        index.set(next, counter);
        low.set(next, counter++);
        stack.push(next);
        onStack.add(next);
        work.push({ v: next, i: 0 });
      } else if (onStack.has(next)) low.set(top.v, Math.min(low.get(top.v), index.get(next)));
      continue;
    }
    work.pop();
    if (work.length > 0) low.set(work[work.length - 1].v, Math.min(low.get(work[work.length - 1].v), low.get(top.v)));
    if (low.get(top.v) === index.get(top.v)) {
      const members = [];
      let m;
      do {
        m = stack.pop();
        onStack.delete(m);
        members.push(m);
      } while (m !== top.v);
      if (members.length > 1) circles.push(members);
    }
  }
}

/** One concrete circle through the component's first module (breadth-first back to it). */
function oneCircle(members) {
  const inside = new Set(members);
  const first = members.sort()[0];
  const from = new Map([[first, null]]);
  const queue = [first];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v)) {
      if (w === first) {
        const path = [v];
        for (let p = from.get(v); p !== null; p = from.get(p)) path.unshift(p);
        return [...path, first];
      }
      if (inside.has(w) && !from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return members;
}

if (circles.length === 0) {
  console.log(`no import circles among ${files.length} modules`);
  process.exit(0);
}
for (const c of circles) {
  console.log(
    `import circle (${c.length} modules): ${oneCircle(c)
      .map((f) => relative(root, f))
      .join(' → ')}`,
  );
}
console.log(
  `${circles.length} import circle${circles.length === 1 ? '' : 's'}: break each by moving what both sides need into a module of its own.`,
);
process.exit(1);
