// The import direction from ARCHITECTURE.md, as one ESLint rule at error level.
// Written here rather than configured from a plugin because no plugin we found lets a
// room accept type-only imports (the store and the UI take "types only") while refusing
// value imports, and one table below is easier to audit than a zone list per room.
import { builtinModules } from 'node:module';
import path from 'node:path';

/** Rooms, most specific prefix first. Paths are relative to the project root. */
export const ROOMS = [
  ['src/rig/contract', 'src/rig/contract.ts'],
  ['src/policy/contract', 'src/policy/contract.ts'],
  ['src/pose', 'src/pose/'],
  ['src/tasks', 'src/tasks/'],
  ['src/layouts', 'src/layouts/'],
  ['src/analysis', 'src/analysis/'],
  ['src/rig', 'src/rig/'],
  ['src/policy', 'src/policy/'],
  ['src/rollout', 'src/rollout/'],
  ['src/scene3d', 'src/scene3d/'],
  ['src/sim', 'src/sim/'],
  ['src/emulated-cell', 'src/emulated-cell/'],
  ['src/session', 'src/session/'],
  ['src/teleop', 'src/teleop/'],
  ['src/record', 'src/record/'],
  ['src/store', 'src/store/'],
  ['src/server/api-types', 'src/server/api-types.ts'],
  ['src/server/api-types', 'src/server/api/'],
  ['src/server', 'src/server/'],
  ['src/app', 'src/app/'],
  ['src/electron', 'src/electron/'],
  ['drivers/cameras', 'drivers/cameras/'],
  ['drivers/cell-io', 'drivers/cell-io/'],
  ['drivers/leaders', 'drivers/leaders/'],
  ['drivers', 'drivers/'],
  ['ros', 'ros/'],
  ['calibration', 'calibration/'],
  ['station-ui', 'station-ui/'],
  ['test', 'test/'],
  ['bench', 'bench/'],
  ['scripts', 'scripts/'],
];

const RIG = ['src/rig', 'src/rig/contract'];
// Quaternions and rotations: below every room that places things in 3D, so each can use the one copy.
const POSE = 'src/pose';
const ALL_SRC = [
  POSE,
  'src/tasks',
  'src/layouts',
  'src/analysis',
  'src/scene3d',
  ...RIG,
  'src/policy',
  'src/policy/contract',
  'src/rollout',
  'src/sim',
  'src/session',
  'src/record',
  'src/store',
  'src/server/api-types',
  'src/server',
];

/** room → rooms it may import values from (itself always allowed). */
export const MAY_IMPORT = {
  'src/pose': [],
  'src/tasks': [POSE],
  'src/layouts': [POSE, 'src/tasks'],
  'src/analysis': [POSE, 'src/tasks', 'src/layouts'],
  'src/rig/contract': [POSE, 'src/tasks'],
  'src/rig': [POSE, 'src/tasks', 'src/rig/contract'],
  'src/policy/contract': ['src/rig/contract'],
  // Privileged code policies solve grasps with the rig's own kinematics (src/rig/kinematics.ts).
  'src/policy': [POSE, 'src/rig/contract', 'src/policy/contract', 'src/rig'],
  // The three.js description of rig + layout, shared by the sim cameras, the cell cameras and the UI.
  'src/scene3d': [POSE, 'src/tasks', 'src/rig/contract'],
  'src/rollout': [POSE, ...RIG, 'src/policy', 'src/policy/contract', 'src/tasks'],
  // Sweeps (worker threads) live in sim and run the one rollout loop with a policy.
  'src/sim': [
    POSE,
    ...RIG,
    'src/tasks',
    'src/layouts',
    'src/scene3d',
    'src/policy',
    'src/policy/contract',
    'src/rollout',
  ],
  // The stand-in for the physical cell: bus emulators (drivers) driving a sim world. Only the
  // composition root, tests and benchmarks import it, so nothing in the station's stack can
  // tell it from hardware.
  'src/emulated-cell': [
    POSE,
    ...RIG,
    'src/tasks',
    'src/layouts',
    'src/scene3d',
    'src/sim',
    'src/policy',
    'src/policy/contract',
    'drivers',
  ],
  'src/record': [...RIG],
  // Teleoperation: leaders (through the src/rig Leader contract) drive a follower rig; takes are recorded.
  'src/teleop': [POSE, 'src/tasks', 'src/layouts', ...RIG, 'src/record'],
  'src/store': [],
  'src/session': [
    POSE,
    'src/tasks',
    'src/layouts',
    'src/analysis',
    ...RIG,
    'src/policy',
    'src/policy/contract',
    'src/rollout',
    'src/sim',
    'src/record',
    'src/store',
  ],
  // The station API's requests, responses and events: shared with the UI, so pure.
  'src/server/api-types': [POSE, 'src/tasks', 'src/rig/contract', 'src/analysis'],
  'src/server': [...ALL_SRC],
  'src/app': [
    ...ALL_SRC,
    'src/app',
    'src/emulated-cell',
    'src/teleop',
    'drivers',
    'drivers/cameras',
    'drivers/cell-io',
    'drivers/leaders',
    'ros',
    'calibration',
  ],
  'src/electron': ['src/app'],
  drivers: [...RIG],
  // Camera implementations (V4L2 and testsrc through ffmpeg): the Camera contract and its shared bookkeeping only.
  'drivers/cameras': [...RIG],
  // OPC UA cell I/O (the PLC client, its emulator, the station's own server): the rig contract only.
  'drivers/cell-io': ['src/rig/contract'],
  // Leader arms (YAM + teaching handle, GELLO): the Leader contract, and the CAN/Damiao stack and emulators in drivers.
  'drivers/leaders': [...RIG, 'drivers'],
  ros: [...RIG, 'src/record'],
  calibration: [POSE, 'src/sim', 'src/record', ...RIG, 'src/tasks', 'src/layouts'],
  // The UI reuses the pure rooms; everything else it reaches through the station API.
  'station-ui': [POSE, 'src/tasks', 'src/layouts', 'src/analysis', 'src/scene3d', 'src/server/api-types'],
  test: null, // anything
  bench: null,
  scripts: null,
};

/** Rooms whose modules may only import types from these rooms (besides their value imports). */
export const TYPES_FROM = {
  'src/store': [...ALL_SRC],
  'src/policy/contract': ['src/rig/contract'],
  'src/policy': [...RIG],
  'station-ui': ['src/server', 'src/rig/contract'],
  // The compare report carries each real rollout's operator time as the session journal counts it.
  'src/server/api-types': ['src/session'],
};

/** Pure rooms: no Node built-ins, so the UI can reuse them. */
export const PURE = new Set([
  POSE,
  'src/tasks',
  'src/layouts',
  'src/analysis',
  'src/scene3d',
  'src/rig/contract',
  'src/policy/contract',
  'src/server/api-types',
  'station-ui',
]);

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

export function roomOf(relPath) {
  const p = relPath.split(path.sep).join('/');
  for (const [room, prefix] of ROOMS) {
    if (prefix.endsWith('/') ? p.startsWith(prefix) : p === prefix) return room;
  }
  return undefined;
}

export function makeRule(projectRoot) {
  return {
    meta: {
      type: 'problem',
      docs: { description: 'enforce the room import direction of ARCHITECTURE.md' },
      schema: [],
    },
    create(context) {
      const file = path.relative(projectRoot, context.filename ?? context.getFilename());
      const from = roomOf(file);
      if (!from) return {};
      const allowed = MAY_IMPORT[from];
      function check(node, source, typeOnly) {
        if (typeof source !== 'string') return;
        if (builtins.has(source) || builtins.has(source.split('/')[0])) {
          if (PURE.has(from) && !typeOnly) {
            context.report({
              node,
              message: `${from} is a pure room: it may not import the Node built-in '${source}'.`,
            });
          }
          return;
        }
        if (!source.startsWith('.')) return; // packages are judged by review, not by room
        const target = path.relative(projectRoot, path.resolve(path.dirname(path.resolve(projectRoot, file)), source));
        const to = roomOf(target.replace(/\.js$/, '.ts'));
        if (!to || to === from || allowed === null) return;
        if (from !== 'test' && from !== 'bench' && (to === 'test' || to === 'bench')) {
          context.report({
            node,
            message: `${from} may not import ${to}: production code never imports tests or benchmarks.`,
          });
          return;
        }
        if (allowed.includes(to)) return;
        if (typeOnly && (TYPES_FROM[from] ?? []).includes(to)) return;
        context.report({
          node,
          message: `${from} may not import ${typeOnly ? 'types from ' : ''}${to} (ARCHITECTURE.md: ${from} may import ${allowed.length ? allowed.join(', ') : 'nothing'}${TYPES_FROM[from] ? `; types from ${TYPES_FROM[from].join(', ')}` : ''}).`,
        });
      }
      return {
        ImportDeclaration(node) {
          const typeOnly =
            node.importKind === 'type' ||
            (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'));
          check(node, node.source.value, typeOnly);
        },
        ExportNamedDeclaration(node) {
          if (node.source) check(node, node.source.value, node.exportKind === 'type');
        },
        ExportAllDeclaration(node) {
          check(node, node.source.value, node.exportKind === 'type');
        },
        ImportExpression(node) {
          if (node.source.type === 'Literal') check(node, node.source.value, false);
        },
      };
    },
  };
}
