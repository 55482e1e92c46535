/**
 * Reads the exported URDF back with a real URDF parser — urdf-loader (three.js) running in headless
 * Debian chromium — and checks joint names, limits and that FK through the parsed tree matches
 * src/rig/kinematics.ts in the table frame.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { chromium } from 'playwright-core';
import { rigToUrdf } from '../../src/rig/urdf.js';
import { yamRigModel } from '../../src/rig/yam.js';
import { forwardKinematicsTable, linkFramesTable, LINK_NAMES } from '../../src/rig/kinematics.js';
import { FINGER_ORIGIN_Z_M } from '../../src/rig/link-geometry.js';
import { PROJECT_ROOT, runTandem } from '../helpers/cli.js';

const ORIGIN = 'http://tandem.test';
const PAGE = `<!doctype html><script type="importmap">{"imports":{"three":"/nm/three/build/three.module.js","three/examples/jsm/":"/nm/three/examples/jsm/"}}</script>`;

/** The parts of urdf-loader's URDFJoint the test reads (typed here: the page code is not type-checked against three). */
interface BrowserJoint {
  jointType: string;
  limit: { lower: number; upper: number; effort: number; velocity: number };
  axis: { x: number; y: number; z: number };
}

interface ParsedRobot {
  joints: Record<
    string,
    { type: string; lower: number; upper: number; effort: number; velocity: number; axis: number[] }
  >;
  links: string[];
  /** Link name → column-major 4×4 world matrix (per configuration). */
  poses: Record<string, number[]>[];
}

async function parseInChromium(urdf: string, configs: Record<string, number>[]): Promise<ParsedRobot> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'tandem-urdf-chromium-'));
  // A fresh --user-data-dir, as playwright spells it.
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = await browser.newPage();
    const nm = join(PROJECT_ROOT, 'node_modules');
    await page.route(`${ORIGIN}/**`, async (route) => {
      const url = new URL(route.request().url());
      if (url.pathname === '/') return route.fulfill({ contentType: 'text/html', body: PAGE });
      if (url.pathname.startsWith('/nm/')) {
        const file = normalize(join(nm, decodeURIComponent(url.pathname.slice(4))));
        if (!file.startsWith(nm)) return route.fulfill({ status: 403 });
        return route.fulfill({ contentType: 'text/javascript', body: readFileSync(file, 'utf8') });
      }
      return route.fulfill({ status: 404 });
    });
    await page.goto(`${ORIGIN}/`);
    return await page.evaluate(
      async ({ urdf, configs }) => {
        const modPath = '/nm/urdf-loader/src/URDFLoader.js';
        const { default: URDFLoader } = await import(modPath);
        const robot = new URDFLoader().parse(urdf);
        const joints: Record<
          string,
          { type: string; lower: number; upper: number; effort: number; velocity: number; axis: number[] }
        > = {};
        for (const [name, j] of Object.entries<BrowserJoint>(robot.joints)) {
          joints[name] = {
            type: j.jointType,
            lower: j.limit.lower,
            upper: j.limit.upper,
            effort: j.limit.effort,
            velocity: j.limit.velocity,
            axis: [j.axis.x, j.axis.y, j.axis.z],
          };
        }
        const poses: Record<string, number[]>[] = [];
        for (const config of configs) {
          for (const [name, v] of Object.entries(config)) robot.setJointValue(name, v);
          robot.updateMatrixWorld(true);
          const p: Record<string, number[]> = {};
          for (const [name, l] of Object.entries<{ matrixWorld: { elements: number[] } }>(robot.links))
            p[name] = Array.from(l.matrixWorld.elements as ArrayLike<number>);
          poses.push(p);
        }
        return { joints, links: Object.keys(robot.links), poses };
      },
      { urdf, configs },
    );
  } finally {
    await browser.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

test('the URDF parses in urdf-loader with the model’s joints and limits, and its FK matches kinematics.ts', async () => {
  const model = yamRigModel({
    left: { position: [-0.4, 0.3, 0.02], quaternion: [0, 0, Math.sin(0.2), Math.cos(0.2)] },
    right: { position: [-0.4, -0.3, 0], quaternion: [0, 0, 0, 1] },
  });
  const urdf = rigToUrdf(model);
  const qs = [
    [0, 0, 0, 0, 0, 0],
    [0.5, 1.2, 0.9, -0.4, 0.7, -1.1],
    [-1.9, 2.5, 2.0, 1.2, -1.3, 1.8],
  ];
  const qsRight = [
    [0.3, 0.2, 0.1, 0.4, -0.5, 0.6],
    [-2.4, 3.5, 3.0, -1.6, 1.5, -2.0],
    [3.0, 0.05, 1.5, 1.5, -1.5, 2.0],
  ];
  const configs = qs.map((q, c) => {
    const config: Record<string, number> = {};
    // Within the limits: urdf-loader clamps joint values to them, kinematics.ts does not.
    for (const arm of model.arms)
      arm.joints.forEach((j, i) => (config[j.name] = arm.side === 'left' ? q[i] : qsRight[c][i]));
    config.left_finger1_joint = 0.01 * c;
    return config;
  });
  const parsed = await parseInChromium(urdf, configs);

  for (const arm of model.arms) {
    for (const spec of arm.joints) {
      const j = parsed.joints[spec.name];
      assert.ok(j, `joint ${spec.name} in the URDF`);
      assert.equal(j.type, 'revolute');
      assert.ok(
        Math.abs(j.lower - spec.minRad) < 1e-9 && Math.abs(j.upper - spec.maxRad) < 1e-9,
        `${spec.name} limits`,
      );
      assert.equal(j.effort, spec.maxTorqueNm);
      assert.equal(j.velocity, spec.maxVelocityRadS);
    }
    assert.equal(parsed.joints[`${arm.side}_finger1_joint`].type, 'prismatic');
    assert.equal(parsed.joints[`${arm.side}_finger2_joint`].type, 'prismatic');
    assert.equal(parsed.joints[`${arm.side}_finger1_joint`].upper, 0.048);
  }
  for (const side of ['left', 'right'])
    for (const l of LINK_NAMES) assert.ok(parsed.links.includes(`${side}_${l}`), `link ${side}_${l}`);

  configs.forEach((config, c) => {
    for (const arm of model.arms) {
      const q = arm.joints.map((j) => config[j.name]);
      const frames = linkFramesTable(arm, q);
      LINK_NAMES.forEach((name, li) => {
        const m = parsed.poses[c][`${arm.side}_${name}`];
        const f = frames[li];
        for (let r = 0; r < 3; r++) {
          assert.ok(
            Math.abs(m[12 + r] - f.position[r]) < 1e-6,
            `config ${c} ${arm.side}_${name} position[${r}]: urdf ${m[12 + r]} vs kinematics ${f.position[r]}`,
          );
          for (let col = 0; col < 3; col++)
            assert.ok(
              Math.abs(m[col * 4 + r] - f.rotation[r * 3 + col]) < 1e-6,
              `config ${c} ${arm.side}_${name} R[${r}][${col}]`,
            );
        }
      });
      const ee = forwardKinematicsTable(arm, q);
      assert.ok(Math.abs(parsed.poses[c][`${arm.side}_gripper`][12] - ee.position[0]) < 1e-6);
    }
    // The second finger mimics the first, opposite along the gripper's y axis.
    const g = parsed.poses[c].left_gripper;
    const f1 = parsed.poses[c].left_finger1;
    const f2 = parsed.poses[c].left_finger2;
    const gap = [0, 1, 2].map((r) => f1[12 + r] - f2[12 + r]);
    const gy = [g[4], g[5], g[6]];
    const along = gap[0] * gy[0] + gap[1] * gy[1] + gap[2] * gy[2];
    assert.ok(Math.abs(along - 2 * 0.01 * c) < 1e-9, `finger gap ${along}`);
    const fingerZ = (f1[12] - g[12]) * g[8] + (f1[13] - g[13]) * g[9] + (f1[14] - g[14]) * g[10];
    assert.ok(Math.abs(fingerZ - FINGER_ORIGIN_Z_M) < 1e-9);
  });
});

test('tandem rig urdf writes the file and refuses a malformed base pose in one sentence', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-urdf-'));
  try {
    const out = join(dir, 'rig.urdf');
    const ok = await runTandem(['rig', 'urdf', '-o', out, '--left-base=-0.4,0.35,0,10']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /Wrote the yam-bimanual URDF .* to .*rig\.urdf\./);
    const text = readFileSync(out, 'utf8');
    assert.match(
      text,
      /<joint name="left_base_joint" type="fixed">\s*<parent link="table"\/><child link="left_base_link"\/>\s*<origin xyz="-0.4 0.35 0" rpy="0 0 0.174532925199"\/>/,
    );
    const stdout = await runTandem(['rig', 'urdf']);
    assert.equal(stdout.code, 0);
    assert.match(stdout.stdout, /^<\?xml/);
    assert.equal((stdout.stdout.match(/type="revolute"/g) ?? []).length, 12);
    const bad = await runTandem(['rig', 'urdf', '--right-base', 'a,b,c']);
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr.trim(),
      "--right-base must be x,y,z in metres with an optional yaw in degrees (e.g. -0.4,0.3,0,0), not 'a,b,c'.",
    );
    const nowhere = await runTandem(['rig', 'urdf', '-o', join(dir, 'missing', 'x.urdf')]);
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /Could not write the URDF to .*: its folder does not exist\./);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
