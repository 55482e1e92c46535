/**
 * ONNX uploads are untrusted: a model naming external data (a file of the station's, read back as
 * actions) is refused, a tiny model that describes a huge constant does not make the station
 * allocate it, and the check runs in a worker with a heap cap and a time limit — each a one-sentence
 * 400 that stores nothing. In-process against a real store and onnxruntime.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { openStore } from '../../src/store/store.js';
import { storeUpload } from '../../src/server/uploads.js';
import { ApiRefusal } from '../../src/server/request-checks.js';
import { checkNoExternalData } from '../../src/policy/onnx/external-data.js';
import { buildLinearPolicyModel } from '../policy/onnx-model.js';
import { PROJECT_ROOT } from '../helpers/cli.js';

const { onnx } = onnxProto;

function withStore(t: { after(fn: () => void): void }): { dataDir: string; store: ReturnType<typeof openStore> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-onnx-upload-'));
  const store = openStore(join(dataDir, 'tandem.sqlite'));
  t.after(() => {
    store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, store };
}

const refusal = (re: RegExp) => (e: unknown) =>
  e instanceof ApiRefusal && e.status === 400 && re.test(e.message) && !e.message.includes('\n');

/** The linear test model with its weight matrix W moved out to `location` (as onnx.save with external data writes it). */
function externalModel(location: string): Buffer {
  const model = onnx.ModelProto.decode(buildLinearPolicyModel({ horizon: 1, cameras: [] }).bytes);
  const w = model.graph!.initializer!.find((x) => x.name === 'W')!;
  const length = w.rawData!.length;
  w.rawData = new Uint8Array(0);
  w.dataLocation = onnx.TensorProto.DataLocation.EXTERNAL;
  w.externalData = [
    { key: 'location', value: location },
    { key: 'offset', value: '0' },
    { key: 'length', value: String(length) },
  ];
  return Buffer.from(onnx.ModelProto.encode(model).finish());
}

/** The linear model plus a constant of side×side floats summed into its bias: a few hundred bytes describing side² × 4 bytes. */
function constantBombModel(side: number): Buffer {
  const model = onnx.ModelProto.decode(buildLinearPolicyModel({ horizon: 1, cameras: [] }).bytes);
  const g = model.graph!;
  g.initializer!.push(
    onnx.TensorProto.create({
      name: 'bomb_shape',
      dims: [2],
      dataType: onnx.TensorProto.DataType.INT64,
      int64Data: [side, side],
    }),
  );
  const add = g.node!.find((n) => n.opType === 'Add' && n.input!.includes('b'))!;
  add.input = add.input!.map((i) => (i === 'b' ? 'b_plus' : i));
  g.node!.unshift(
    onnx.NodeProto.create({
      opType: 'ConstantOfShape',
      input: ['bomb_shape'],
      output: ['bomb'],
      attribute: [
        {
          name: 'value',
          type: onnx.AttributeProto.AttributeType.TENSOR,
          t: { dims: [1], dataType: onnx.TensorProto.DataType.FLOAT, floatData: [0] },
        },
      ],
    }),
    onnx.NodeProto.create({
      opType: 'ReduceSum',
      input: ['bomb'],
      output: ['bomb_sum'],
      attribute: [{ name: 'keepdims', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
    }),
    onnx.NodeProto.create({ opType: 'Add', input: ['b', 'bomb_sum'], output: ['b_plus'] }),
  );
  return Buffer.from(onnx.ModelProto.encode(model).finish());
}

/** The process's peak resident memory so far, bytes (the kernel's high-water mark). */
function peakRss(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number(kb) * 1024;
}

test("an upload whose weights name a file of the station's (external data) is refused, and nothing is stored", async (t) => {
  const { dataDir, store } = withStore(t);
  // Relative to the station's working directory, as onnxruntime resolves it for a model given as bytes.
  assert.ok(statSync(join(PROJECT_ROOT, 'package.json')).size > 784);
  const bytes = externalModel('package.json');
  assert.deepEqual(checkNoExternalData(bytes).ok, false);
  await assert.rejects(
    storeUpload(store, dataDir, 'policy', 'sneaky.onnx', bytes),
    refusal(
      /^The model sneaky\.onnx is refused: tensor 'W' keeps its data in another file \('package\.json'\); save the model with its weights inside/,
    ),
  );
  assert.deepEqual(store.listPolicies(), []);
  assert.deepEqual(readdirSync(join(dataDir, 'policies')), [], 'no file kept');
});

test('a good upload is stored, readable by this user only', async (t) => {
  const { dataDir, store } = withStore(t);
  const r = await storeUpload(
    store,
    dataDir,
    'policy',
    'good.onnx',
    Buffer.from(buildLinearPolicyModel({ horizon: 2, cameras: [] }).bytes),
  );
  assert.equal(r.inserted, true);
  const [file] = readdirSync(join(dataDir, 'policies'));
  assert.equal(statSync(join(dataDir, 'policies', file)).mode & 0o777, 0o600);
  assert.equal(statSync(join(dataDir, 'policies')).mode & 0o777, 0o700);
  assert.equal(statSync(join(dataDir, 'tandem.sqlite')).mode & 0o777, 0o600);
});

test('a tiny model describing a 780 MB constant is checked without the station allocating it', async (t) => {
  const { dataDir, store } = withStore(t);
  const bytes = constantBombModel(14_000);
  assert.ok(bytes.length < 16 * 1024, `${bytes.length} bytes`);
  const before = peakRss();
  // Accepted or refused, the check must not fold the constant: 780 MB would show in the peak.
  await storeUpload(store, dataDir, 'policy', 'bomb.onnx', bytes).catch((e: unknown) =>
    assert.ok(e instanceof ApiRefusal, String(e)),
  );
  const grew = peakRss() - before;
  t.diagnostic(`peak resident memory grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
  assert.ok(grew < 300 * 2 ** 20, `the peak grew ${(grew / 2 ** 20).toFixed(0)} MiB`);
});

test('the check has a time limit and a heap cap, each said in one sentence', async (t) => {
  const { dataDir, store } = withStore(t);
  const good = Buffer.from(buildLinearPolicyModel({ horizon: 2, cameras: [] }).bytes);
  await assert.rejects(
    storeUpload(store, dataDir, 'policy', 'slow.onnx', good, { maxHeapMb: 256, timeoutMs: 1 }),
    refusal(/^The model slow\.onnx took longer than 1 ms to check, so it was refused\.$/),
  );
  await assert.rejects(
    storeUpload(store, dataDir, 'policy', 'big.onnx', good, { maxHeapMb: 2, timeoutMs: 60_000 }),
    refusal(/^The model big\.onnx needed more than 2 MiB to check, so it was refused\.$/),
  );
  assert.deepEqual(store.listPolicies(), []);
});
