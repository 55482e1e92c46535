import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { runInProcess, runTandem, runTandemProcess, PROJECT_ROOT } from '../helpers/cli.js';
import { getTask } from '../../src/tasks/registry.js';
import type { LayoutSet } from '../../src/layouts/layout-set.js';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tandem-layouts-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const GOLDEN = join(PROJECT_ROOT, 'test/fixtures/layouts/bottles-golden.json');
const noStack = (s: string) => assert.doesNotMatch(s, /\n\s+at .*:\d+:\d+/);
const oneSentence = (s: string) => {
  noStack(s);
  assert.equal(s.trim().split('\n').length, 1, `one line, got: ${s}`);
};

test('two processes sample byte-identical files, equal to the committed golden set', async () => {
  const args = (out: string) => [
    'layouts',
    'sample',
    '--task',
    'bottles-in-the-bin',
    '--per-tier',
    '1',
    '--tiers',
    '1,3,5',
    '--seed',
    '2025',
    '-o',
    out,
  ];
  const [a, b] = await Promise.all([
    runTandemProcess(args(join(dir, 'a.json'))),
    runTandemProcess(args(join(dir, 'b.json'))),
  ]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const bytes = readFileSync(join(dir, 'a.json'));
  assert.ok(bytes.equals(readFileSync(join(dir, 'b.json'))));
  assert.ok(
    bytes.equals(readFileSync(GOLDEN)),
    'sampling changed: the golden set no longer reproduces — a layout-set version bump is needed',
  );
  assert.match(a.stdout, /Wrote 3 layouts of bottles-in-the-bin/);
  assert.match(a.stdout, /sha256 2f39e649b40dbbcbedbbe09d43dadc4f9fb03761632ac563c5ecdc90bd97eb1e/);
});

test('sample keeps an existing file unless --force, and --json reports the hash', async () => {
  const out = join(dir, 'keep.json');
  writeFileSync(out, 'precious');
  const r = await runInProcess(
    ['layouts', 'sample', '--task', 'mug-flipping', '--per-tier', '1', '--seed', '1', '-o', out],
    dir,
  );
  assert.equal(r.code, 2);
  assert.match(r.stderr, /already exists; choose another name or add --force/);
  assert.equal(readFileSync(out, 'utf8'), 'precious');
  const f = await runInProcess(
    ['layouts', 'sample', '--task', 'mug-flipping', '--per-tier', '1', '--seed', '1', '-o', out, '--force', '--json'],
    dir,
  );
  assert.equal(f.code, 0, f.stderr);
  const j = JSON.parse(f.stdout) as { sha256: string; layouts: number; tiers: number[] };
  assert.equal(j.layouts, 5);
  assert.deepEqual(j.tiers, [1, 2, 3, 4, 5]);
  assert.equal((JSON.parse(readFileSync(out, 'utf8')) as LayoutSet).sha256, j.sha256);
});

test('sample: an unknown task, a tier out of range or a bad count is one sentence and a non-zero exit', async () => {
  const base = ['layouts', 'sample', '--per-tier', '1', '--seed', '1', '-o', join(dir, 'never.json')];
  const cases: [string[], RegExp][] = [
    [
      ['--task', 'juggling'],
      /Unknown task 'juggling'\. Known tasks: bottles-in-the-bin, mug-flipping, sort-from-tote\./,
    ],
    [['--task', 'mug-flipping', '--tiers', '1,6'], /tier '6' is out of range; tiers run from 1 to 5/],
    [['--task', 'mug-flipping', '--seed', 'abc'], /--seed must be a whole number/],
  ];
  for (const [extra, re] of cases) {
    const r = await runInProcess([...base, ...extra], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, re);
    oneSentence(r.stderr);
  }
  assert.ok(!existsSync(join(dir, 'never.json')));
});

test('verify: exit 0 for an intact set; a changed coordinate exits 1 naming the file and both hashes', async () => {
  const ok = await runInProcess(['layouts', 'verify', GOLDEN], dir);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /OK — bottles-in-the-bin v1, 3 layouts/);
  const text = readFileSync(GOLDEN, 'utf8');
  const set = JSON.parse(text) as LayoutSet;
  const x = set.layouts[2].objects[1].pose.x;
  const bad = join(dir, 'tampered.json');
  writeFileSync(bad, text.replace(`"x": ${x},`, `"x": ${(x + 0.0123).toFixed(4)},`));
  const r = await runTandem(['layouts', 'verify', 'tampered.json'], { cwd: dir });
  assert.equal(r.code, 1);
  oneSentence(r.stderr);
  assert.match(
    r.stderr,
    /^tampered\.json does not match its hash: expected 2f39e649b40dbbcb[0-9a-f]+ \(recorded in the file\), found [0-9a-f]{64} \(computed/,
  );
  const j = await runInProcess(['layouts', 'verify', bad, '--json'], dir);
  assert.equal(j.code, 1);
  const report = JSON.parse(j.stdout) as { ok: boolean; expected: string; found: string };
  assert.equal(report.ok, false);
  assert.equal(report.expected, set.sha256);
  assert.match(report.found, /^[0-9a-f]{64}$/);
  assert.notEqual(report.found, report.expected);
});

test('verify: truncated, not a layout set, missing — one sentence each', async () => {
  const text = readFileSync(GOLDEN, 'utf8');
  writeFileSync(join(dir, 'cut.json'), text.slice(0, 700));
  writeFileSync(join(dir, 'other.json'), '{"format": "something/1"}');
  const cases: [string, RegExp][] = [
    ['cut.json', /cut\.json is not valid JSON .*the file may be truncated or damaged/],
    ['other.json', /format "something\/1", not "tandem\.layout-set\/1"/],
    ['nothing.json', /There is no layout set file at nothing\.json/],
  ];
  for (const [file, re] of cases) {
    const r = await runInProcess(['layouts', 'verify', file], dir);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, re);
    oneSentence(r.stderr);
  }
});

test('bump writes version 2 with lineage and never overwrites its input', async () => {
  const src = join(dir, 'edit.json');
  writeFileSync(src, readFileSync(GOLDEN, 'utf8').replace('"yawRad": 0,', '"yawRad": 0.1,'));
  const same = await runInProcess(['layouts', 'bump', src, '-o', src, '--force'], dir);
  assert.equal(same.code, 2);
  assert.match(same.stderr, /A bump never overwrites its input/);
  const r = await runInProcess(['layouts', 'bump', src, '-o', join(dir, 'v2.json')], dir);
  assert.equal(r.code, 0, r.stderr);
  const v2 = JSON.parse(readFileSync(join(dir, 'v2.json'), 'utf8')) as LayoutSet;
  assert.equal(v2.version, 2);
  assert.deepEqual(v2.previous, {
    version: 1,
    sha256: '2f39e649b40dbbcbedbbe09d43dadc4f9fb03761632ac563c5ecdc90bd97eb1e',
  });
  assert.equal((await runInProcess(['layouts', 'verify', join(dir, 'v2.json')], dir)).code, 0);
  const again = await runInProcess(['layouts', 'bump', src, '-o', join(dir, 'v2.json')], dir);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already exists/);
});

test('bump warns about an edit that moves an object out of reach, and still writes the new version', async () => {
  const set = JSON.parse(readFileSync(GOLDEN, 'utf8')) as LayoutSet;
  const id = set.layouts[1].objects[0].id;
  const edited = {
    ...set,
    layouts: set.layouts.map((l, i) =>
      i === 1 ? { ...l, objects: l.objects.map((o) => (o.id === id ? { ...o, pose: { ...o.pose, x: 0.45 } } : o)) } : l,
    ),
  };
  const src = join(dir, 'far.json');
  writeFileSync(src, JSON.stringify(edited, null, 2));
  const r = await runInProcess(['layouts', 'bump', src, '-o', join(dir, 'far-v2.json'), '--json'], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`warning: layout 1: ${id} is out of reach of both arms\\.`));
  assert.ok((JSON.parse(r.stdout) as { warnings: string[] }).warnings.length >= 1);
  assert.ok(existsSync(join(dir, 'far-v2.json')));
});

test('show draws a PNG of the requested size with each object where the layout puts it', async () => {
  const out = join(dir, 'show.png');
  const size = 480;
  const r = await runTandem(['layouts', 'show', GOLDEN, '--layout', '2', '-o', out, '--size', String(size)]);
  assert.equal(r.code, 0, r.stderr);
  const img = sharp(readFileSync(out));
  const meta = await img.metadata();
  assert.equal(meta.format, 'png');
  assert.equal(meta.width, size);
  assert.equal(meta.height, size);
  const { data, info } = await img.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const pixel = (u: number, v: number) => {
    const i = (Math.round(v) * info.width + Math.round(u)) * info.channels;
    return [data[i], data[i + 1], data[i + 2]];
  };
  const close = (a: number[], b: readonly number[], tol = 12) => a.every((c, i) => Math.abs(c - b[i]) <= tol);
  // Where the table is, found in the picture itself (not from the drawing's own mapping): outside
  // the table the picture is white down to the caption, so the first non-white pixels scanned in
  // from the left and right edges along a row well inside the table are its border, and the
  // border's vertical run through that row spans the table's depth.
  const WHITE = [255, 255, 255] as const;
  const drawn = (u: number, v: number) => !close(pixel(u, v), WHITE, 3);
  const row = Math.round(size * 0.4);
  let uL = 0;
  while (uL < size && !drawn(uL, row)) uL++;
  let uR = size - 1;
  while (uR > 0 && !drawn(uR, row)) uR--;
  let vT = row;
  while (vT > 0 && drawn(uL, vT - 1)) vT--;
  let vB = row;
  while (vB < size - 1 && drawn(uL, vB + 1)) vB++;
  assert.ok(
    uL > 0 && uR < size - 1 && uR - uL > size / 2,
    `the table's border is in the picture: columns ${uL}..${uR}`,
  );
  // The border (2 px) is centred on the table's edge: the edge lies 1 px inside its outer side,
  // and pixel u spans [u, u + 1).
  [uL, uR, vT, vB] = [uL + 1, uR, vT + 1, vB];
  const T = { xMin: -0.5, xMax: 0.5, yMin: -0.6, yMax: 0.6 }; // the station's table (src/tasks/station.ts), 1.0 m deep, 1.2 m wide
  assert.ok(
    Math.abs((uR - uL) / (vB - vT) - 1.2) < 0.02,
    `the table is drawn 1.2 : 1 (wide : deep), not ${((uR - uL) / (vB - vT)).toFixed(3)}`,
  );
  // The picture's documented view: from above, robot at the bottom, table +x up the image, +y to the left.
  const at = (x: number, y: number): [number, number] => [
    uL + ((T.yMax - y) / (T.yMax - T.yMin)) * (uR - uL),
    vT + ((T.xMax - x) / (T.xMax - T.xMin)) * (vB - vT),
  ];
  const set = JSON.parse(readFileSync(GOLDEN, 'utf8')) as LayoutSet;
  const task = getTask(set.task);
  const layout = set.layouts[2];
  const upright = layout.objects.filter((o) => o.posture === 'upright');
  assert.ok(upright.length > 0, 'the golden tier-5 layout has an upright bottle');
  for (const o of upright) {
    const colour = task.objectKinds.find((k) => k.id === o.kind)!.color;
    const [u, v] = at(o.pose.x, o.pose.y);
    assert.ok(
      close(pixel(u, v), colour),
      `${o.id} drawn at (${u.toFixed(0)}, ${v.toFixed(0)}): ${pixel(u, v)} vs ${colour}`,
    );
  }
  // The arm bases sit on the near (bottom) edge, the left arm (+y) on the image's left: dark discs.
  for (const y of [0.3, -0.3]) {
    const [u, v] = at(-0.4 + 0.035, y); // above the disc's centre, clear of its L/R letter
    assert.ok(
      close(pixel(u, v), [0x3b, 0x44, 0x50]),
      `arm base at y = ${y} drawn at (${u.toFixed(0)}, ${v.toFixed(0)}): ${pixel(u, v)}`,
    );
  }
  // Where the layout has nothing — the far corner of the table — the picture shows bare table.
  const [eu, ev] = at(0.45, 0.55);
  assert.ok(
    !upright.some((o) => {
      const [u, v] = at(o.pose.x, o.pose.y);
      return close(pixel(eu, ev), pixel(u, v));
    }),
  );
  assert.ok(close(pixel(eu, ev), [0xef, 0xe9, 0xdc]));
});

test('show: a layout index out of range and a size out of range are sentences', async () => {
  const r = await runInProcess(['layouts', 'show', GOLDEN, '--layout', '7', '-o', join(dir, 'x.png')], dir);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /Layout 7 does not exist: this set has layouts 0 to 2/);
  oneSentence(r.stderr);
  const s = await runInProcess(
    ['layouts', 'show', GOLDEN, '--layout', '0', '-o', join(dir, 'x.png'), '--size', '50000'],
    dir,
  );
  assert.equal(s.code, 2);
  assert.match(s.stderr, /--size must be a whole number from 200 to 4000/);
  assert.ok(!existsSync(join(dir, 'x.png')));
});

test('every layouts command and score answer --help; the real executable too', async () => {
  const real = await runTandem(['layouts', 'verify', '--help']);
  assert.equal(real.code, 0);
  assert.match(real.stdout, /Usage: tandem layouts verify FILE/);
  for (const cmd of [
    ['layouts', 'sample'],
    ['layouts', 'verify'],
    ['layouts', 'show'],
    ['layouts', 'bump'],
    ['score'],
  ]) {
    const r = await runInProcess([...cmd, '--help'], dir);
    assert.equal(r.code, 0);
    assert.match(r.stdout, new RegExp(`Usage: tandem ${cmd.join(' ')}`));
  }
});
