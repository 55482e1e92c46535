import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTandem } from '../helpers/cli.js';
import { EpisodeRecorder } from '../../src/record/episode-recorder.js';
import { openStore } from '../../src/store/store.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { startStation } from '../helpers/station-process.js';
import { until } from '../helpers/until.js';

test('tandem record inspect says a cut-off file is unfinished and how to recover it; recover finishes it and the store lists it as recovered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-record-cli-'));
  try {
    const data = join(dir, 'data');
    mkdirSync(join(data, 'episodes'), { recursive: true });
    const file = join(data, 'episodes', 'e.mcap');
    const store = openStore(join(data, 'tandem.sqlite'));
    const id = store.startRecording({ file, kind: 'rollout' });
    store.close();
    const rec = await EpisodeRecorder.open({
      file,
      rigModel: yamRigModel(),
      metadata: { task: 'bottles-in-the-bin' },
      unixOffsetS: 1.7e9,
      chunkBytes: 8192,
    });
    const z = new Float64Array(14);
    for (let i = 0; i < 400; i++)
      rec.jointState({ timeS: i * 0.004, mode: 'active', position: z, velocity: z, effort: z, faults: [] });
    await rec.close();
    writeFileSync(file, readFileSync(file).subarray(0, 40_000)); // the crash

    const inspect = await runTandem(['record', 'inspect', file]);
    assert.equal(inspect.code, 1, 'an unfinished file is not a clean inspect');
    assert.match(inspect.stdout, /UNFINISHED/);
    assert.match(
      inspect.stdout,
      new RegExp(`Recover it with: tandem record recover ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.match(inspect.stdout, /\/joint_states\s+\d+\s+250\.0/);

    const recover = await runTandem(['record', 'recover', file, '--data', data]);
    assert.equal(recover.code, 0, recover.stderr);
    const out = join(data, 'episodes', 'e.recovered.mcap');
    assert.match(
      recover.stdout,
      new RegExp(
        `^Recovered \\d+ messages \\(\\d+\\.\\d+ s\\) into ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: /joint_states \\d+`,
      ),
    );
    assert.match(recover.stdout, /The station store now lists it as recovered\./);
    const again = await runTandem(['record', 'inspect', out, '--json']);
    assert.equal(again.code, 0);
    assert.equal(JSON.parse(again.stdout).complete, true);
    const after = openStore(join(data, 'tandem.sqlite'));
    try {
      const row = after.getRecording(id)!;
      assert.equal(row.state, 'recovered');
      assert.equal(row.recoveredFile, out);
      assert.match(row.problem ?? '', /cut off/);
    } finally {
      after.close();
    }
    const twice = await runTandem(['record', 'recover', file, '--data', data]);
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /exists already \(recover never overwrites; choose another -o\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the station, starting, names every episode file a crash cut off and the command that recovers it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-record-station-'));
  try {
    const data = join(dir, 'data');
    mkdirSync(join(data, 'episodes'), { recursive: true });
    const cut = join(data, 'episodes', 'cut.mcap');
    const done = join(data, 'episodes', 'done.mcap');
    const store = openStore(join(data, 'tandem.sqlite'));
    store.startRecording({ file: cut, kind: 'rollout' });
    const doneId = store.startRecording({ file: done, kind: 'rollout' });
    store.endRecording(doneId, { state: 'finished' });
    store.startRecording({ file: join(data, 'episodes', 'never-created.mcap'), kind: 'rollout' });
    store.close();
    for (const f of [cut, done]) {
      const rec = await EpisodeRecorder.open({ file: f, rigModel: yamRigModel(), metadata: {}, unixOffsetS: 0 });
      await rec.close();
    }
    writeFileSync(cut, readFileSync(cut).subarray(0, 500));
    const station = await startStation({ env: { TANDEM_DATA: data } });
    try {
      await until(() => station.stdout().includes('Unfinished episode file'), 20_000);
      const lines = station
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('Unfinished'));
      assert.deepEqual(lines, [
        `Unfinished episode file ${cut} (the station stopped while recording it); recover it with: tandem record recover ${cut}`,
      ]);
    } finally {
      await station.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
