import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import { PROJECT_ROOT } from '../helpers/cli.js';

async function lintAs(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: PROJECT_ROOT });
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((m) => m.ruleId === 'tandem/rooms').map((m) => m.message);
}

test('a pure room may not import a Node built-in', async () => {
  const msgs = await lintAs(
    'src/tasks/x.ts',
    "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n",
  );
  assert.equal(msgs.length, 1);
  assert.match(msgs[0], /pure room/);
});

test('layouts may import tasks but not store', async () => {
  assert.deepEqual(
    await lintAs('src/layouts/x.ts', "import { TASK_IDS } from '../tasks/types.js';\nexport const t = TASK_IDS;\n"),
    [],
  );
  const msgs = await lintAs(
    'src/layouts/x.ts',
    "import { openStore } from '../store/store.js';\nexport const s = openStore;\n",
  );
  assert.equal(msgs.length, 1);
  assert.match(msgs[0], /src\/layouts may not import src\/store/);
});

test('store takes types only from other rooms', async () => {
  assert.deepEqual(
    await lintAs('src/store/x.ts', "import type { Layout } from '../tasks/types.js';\nexport type L = Layout;\n"),
    [],
  );
  const msgs = await lintAs(
    'src/store/x.ts',
    "import { TASK_IDS } from '../tasks/types.js';\nexport const t = TASK_IDS;\n",
  );
  assert.equal(msgs.length, 1);
});

test('production code never imports tests', async () => {
  const msgs = await lintAs(
    'drivers/x.ts',
    "import { runTandem } from '../test/helpers/cli.js';\nexport const r = runTandem;\n",
  );
  assert.equal(msgs.length, 1);
  assert.match(msgs[0], /never imports tests/);
});

test('drivers reach src only through the rig contract', async () => {
  assert.deepEqual(
    await lintAs('drivers/x.ts', "import type { Rig } from '../src/rig/contract.js';\nexport type R = Rig;\n"),
    [],
  );
  assert.equal(
    (
      await lintAs(
        'drivers/x.ts',
        "import { runEpisode } from '../src/rollout/episode.js';\nexport const r = runEpisode;\n",
      )
    ).length,
    1,
  );
});

test('only the composition root, tests and benchmarks may import the emulated cell; it may reach sim and the emulators', async () => {
  const code =
    "import { createEmulatedCell } from '../emulated-cell/emulated-cell.js';\nexport const c = createEmulatedCell;\n";
  assert.deepEqual(await lintAs('src/app/x.ts', code), []);
  for (const room of ['src/rollout', 'src/session', 'src/server', 'src/sim']) {
    const msgs = await lintAs(`${room}/x.ts`, code);
    assert.equal(msgs.length, 1, `${room} must not import the emulated cell`);
  }
  assert.equal(
    (
      await lintAs(
        'drivers/x.ts',
        "import { createEmulatedCell } from '../src/emulated-cell/emulated-cell.js';\nexport const c = createEmulatedCell;\n",
      )
    ).length,
    1,
  );
  assert.deepEqual(
    await lintAs(
      'src/emulated-cell/x.ts',
      "import { createScene } from '../sim/scene.js';\nimport { YamBusEmulator } from '../../drivers/emulators/yam-bus-emulator.js';\nexport const a = [createScene, YamBusEmulator];\n",
    ),
    [],
  );
});

test('the cameras room reaches src only through the rig contract; the composition root may import it', async () => {
  assert.deepEqual(
    await lintAs(
      'drivers/cameras/x.ts',
      "import { StreamingCamera } from '../../src/rig/streaming-camera.js';\nexport const c = StreamingCamera;\n",
    ),
    [],
  );
  assert.equal(
    (
      await lintAs(
        'drivers/cameras/x.ts',
        "import { runEpisode } from '../../src/rollout/run-episode.js';\nexport const r = runEpisode;\n",
      )
    ).length,
    1,
  );
  assert.deepEqual(
    await lintAs(
      'src/app/x.ts',
      "import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';\nexport const c = FfmpegCamera;\n",
    ),
    [],
  );
  assert.equal(
    (
      await lintAs(
        'src/rollout/x.ts',
        "import { FfmpegCamera } from '../../drivers/cameras/ffmpeg-camera.js';\nexport const c = FfmpegCamera;\n",
      )
    ).length,
    1,
  );
});

test('the UI takes the station API types (a pure room) and nothing else of the server', async () => {
  assert.deepEqual(
    await lintAs(
      'station-ui/x.ts',
      "import { EVENTS_PATH } from '../src/server/api-types.js';\nexport const p = EVENTS_PATH;\n",
    ),
    [],
  );
  assert.equal(
    (
      await lintAs(
        'station-ui/x.ts',
        "import { StationServer } from '../src/server/station-server.js';\nexport const s = StationServer;\n",
      )
    ).length,
    1,
  );
  const pure = await lintAs(
    'src/server/api-types.ts',
    "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n",
  );
  assert.equal(pure.length, 1);
  assert.match(pure[0], /pure room/);
});

test('pose is a pure room below every room that places things in 3D: tasks, policy and sim import it, it imports none of them', async () => {
  for (const from of ['src/tasks/x.ts', 'src/policy/code/x.ts', 'src/sim/x.ts', 'src/scene3d/x.ts']) {
    const up = from.split('/').length - 2;
    assert.deepEqual(
      await lintAs(
        from,
        `import { quatMul } from '${'../'.repeat(up)}pose/quaternion.js';\nexport const m = quatMul;\n`,
      ),
      [],
      from,
    );
  }
  const msgs = await lintAs(
    'src/pose/x.ts',
    "import { TASK_IDS } from '../tasks/types.js';\nexport const t = TASK_IDS;\n",
  );
  assert.equal(msgs.length, 1);
  assert.match(msgs[0], /src\/pose may not import src\/tasks/);
  assert.match(
    (await lintAs('src/pose/x.ts', "import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n"))[0] ??
      '',
    /pure room/,
  );
});
