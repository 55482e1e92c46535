import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { LAYOUT_SET_FORMAT, pinLayoutSet, serializeLayoutSet } from '../../src/layouts/layout-set.js';
import { openStore } from '../../src/store/store.js';
import type { Layout } from '../../src/tasks/types.js';

// Objects that end off the table are counted beside the task's own counts (which stay as the task
// scores them). Layout 1 starts a bottle with its centre 3 cm past the table's far edge (x = 0.5 m):
// nothing holds it up, so it drops off at once — a real fall, provoked by the layout alone.

const bin = { id: 'bin', kind: 'bin', pose: { x: 0.1, y: -0.3, yawRad: 0 } } as const;
const LAYOUTS: Layout[] = [
  {
    index: 0,
    tier: 1,
    fixtures: [bin],
    objects: [{ id: 'bottle-0', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.1, y: 0.1, yawRad: 0 } }],
  },
  {
    index: 1,
    tier: 2,
    fixtures: [bin],
    objects: [
      { id: 'bottle-0', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.53, y: 0.3, yawRad: 0 } },
      { id: 'bottle-1', kind: 'bottle-500ml', posture: 'upright', pose: { x: 0.1, y: 0.1, yawRad: 0 } },
    ],
  },
];

test('a bottle that falls off the table edge is counted as offTable in rollout --json, in the stored sweep counts and in the sweep table', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-offtable-'));
  try {
    const file = join(dir, 'edge.json');
    writeFileSync(
      file,
      serializeLayoutSet(
        pinLayoutSet({
          format: LAYOUT_SET_FORMAT,
          task: 'bottles-in-the-bin',
          version: 1,
          seed: 0,
          tiers: [1, 2],
          layouts: LAYOUTS,
        }),
      ),
    );
    const data = join(dir, 'data');
    const [one, sweep] = await Promise.all([
      runTandem([
        'sim',
        'rollout',
        '--layouts',
        file,
        '--layout',
        '1',
        '--policy',
        'code:hold',
        '--seconds',
        '0.5',
        '--json',
      ]),
      runTandem([
        'sim',
        'sweep',
        '--layouts',
        file,
        '--policy',
        'code:hold',
        '--workers',
        '1',
        '--seconds',
        '0.5',
        '--data',
        data,
      ]),
    ]);
    assert.equal(one.code, 0, one.stderr);
    const r = JSON.parse(one.stdout);
    assert.equal(r.valid, true, 'a bottle off the table is a policy failure, not a blow-up');
    // Per object kind, how each object ended: one bottle off the table, the other left where it stood.
    assert.deepEqual(r.counts, {
      inBin: 0,
      target: 2,
      offTable: 1,
      'objects:off-table:bottle-500ml': 1,
      'objects:left-undone:bottle-500ml': 1,
    });

    assert.equal(sweep.code, 0, sweep.stderr);
    const table = sweep.stdout.split('\n');
    const header = table.findIndex((l) => l.startsWith('tier '));
    assert.match(table[header], /objects off table$/);
    const offColumn = (tier: string) =>
      Number(
        table
          .slice(header + 1)
          .find((l) => l.startsWith(`${tier} `))
          ?.trim()
          .split(/\s+/)
          .at(-1),
      );
    assert.equal(offColumn('1'), 0);
    assert.equal(offColumn('2'), 1);
    assert.equal(offColumn('all'), 1);
    const store = openStore(join(data, 'tandem.sqlite'));
    try {
      const rows = store.listRollouts({});
      assert.deepEqual(rows.map((x) => [x.layoutIndex, x.status, x.counts]).sort(), [
        [0, 'valid', { inBin: 0, target: 1, offTable: 0, 'objects:left-undone:bottle-500ml': 1 }],
        [
          1,
          'valid',
          {
            inBin: 0,
            target: 2,
            offTable: 1,
            'objects:off-table:bottle-500ml': 1,
            'objects:left-undone:bottle-500ml': 1,
          },
        ],
      ]);
    } finally {
      store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
