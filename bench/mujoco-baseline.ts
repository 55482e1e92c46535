/**
 * The same-run MuJoCo baseline of the sim bench: the tier-5 scene exported as MJCF
 * (src/sim/mjcf-export.ts) stepped in MuJoCo 3 as WebAssembly (mujoco-js, what a Node user would
 * pick instead of tandem) and in Debian's native MuJoCo (`mujoco-testspeed`, package
 * libmujoco-samples) when it is on PATH.
 *
 * The work: mujoco-js replays the joint and gripper commands tandem's rollout applied (50 Hz,
 * held between control ticks) into the exported position servos, so the arms sweep through the
 * same motions and meet the bottles as they did in tandem (not identically: MuJoCo's contacts and
 * the missing gravity feed-forward make the two rollouts drift apart). `mujoco-testspeed` cannot
 * replay; it steps the scene with the arms holding home (ctrl noise 0), so it is compared with
 * mujoco-js on that same resting work, and its replay speed is estimated from the two.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import load from 'mujoco-js';
import { yamRigModel } from '../src/rig/yam.js';
import type { Layout, TaskDefinition } from '../src/tasks/types.js';
import type { SimCalibration } from '../src/sim/calibration.js';
import { exportMjcf, type MjcfScene } from '../src/sim/mjcf-export.js';
import type { Trajectory } from '../src/rollout/episode.js';

export interface StepRate {
  /** Simulated seconds, CPU seconds, wall seconds, physics steps. */
  readonly simS: number;
  readonly cpuS: number;
  readonly wallS: number;
  readonly steps: number;
}

/** One tier-5 layout as MJCF at the given physics step (the export's is the calibration's). */
export async function mjcfAtStep(
  task: TaskDefinition,
  layout: Layout,
  calibration: SimCalibration,
  stepS: number,
): Promise<MjcfScene> {
  const scene = await exportMjcf({ rigModel: yamRigModel(), task, layout, calibration });
  return { ...scene, xml: scene.xml.replace(/timestep="[^"]+"/, `timestep="${stepS}"`) };
}

let mujoco: Awaited<ReturnType<typeof load>> | undefined;

/**
 * Steps each scene in mujoco-js for its trajectory's length, holding each control tick's applied
 * command (or, without a trajectory, `seconds` with the arms commanded home), and times only the
 * stepping.
 */
export async function mujocoJsRate(
  scenes: readonly MjcfScene[],
  trajectories: readonly (Trajectory | undefined)[],
  seconds: number,
  stepS: number,
): Promise<StepRate> {
  mujoco ??= await load();
  const mj = mujoco;
  let cpuS = 0;
  let wallS = 0;
  let steps = 0;
  let simS = 0;
  scenes.forEach((scene, n) => {
    const path = `/bench-${n}.xml`;
    mj.FS.writeFile(path, scene.xml);
    const m = mj.MjModel.loadFromXML(path);
    const d = new mj.MjData(m);
    const act = scene.actuators.map((a) => mj.mj_name2id(m, mj.mjtObj.mjOBJ_ACTUATOR.value, a));
    // Actuator order: per arm 6 joints then 2 fingers; trajectory order: per arm 6 joints then the gripper (0 closed … 1 open).
    const halfStroke = yamRigModel().arms[0].gripper.strokeM / 2;
    const traj = trajectories[n];
    const total = traj ? traj.steps * (traj.timeS[1] - traj.timeS[0] || 0.02) : seconds;
    const nSteps = Math.round(total / stepS);
    let tick = -1;
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let k = 0; k < nSteps; k++) {
      if (traj) {
        const t = k * stepS;
        let i = tick;
        while (i + 1 < traj.steps && traj.timeS[i + 1] - traj.timeS[0] <= t + 1e-9) i++;
        if (i !== tick && i >= 0) {
          tick = i;
          for (let a = 0; a < 2; a++) {
            for (let j = 0; j < 6; j++) d.ctrl[act[a * 8 + j]] = traj.applied[i * 14 + a * 7 + j];
            const g = traj.applied[i * 14 + a * 7 + 6] * halfStroke;
            d.ctrl[act[a * 8 + 6]] = g;
            d.ctrl[act[a * 8 + 7]] = g;
          }
        }
      }
      mj.mj_step(m, d);
    }
    const c = process.cpuUsage(c0);
    cpuS += (c.user + c.system) / 1e6;
    wallS += (performance.now() - w0) / 1000;
    steps += nSteps;
    simS += nSteps * stepS;
    d.delete();
    m.delete();
  });
  return { simS, cpuS, wallS, steps };
}

/** Why native MuJoCo cannot be measured here, or undefined when `mujoco-testspeed` is on PATH. */
export function nativeMujocoMissing(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v mujoco-testspeed'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'mujoco-testspeed is not on PATH (Debian: apt-get install libmujoco-samples)';
}

/**
 * Debian's native MuJoCo on the same scenes: `mujoco-testspeed FILE NSTEP 1 0` (one thread, no
 * control noise: the arms hold home). CPU time is the child's, read from its shell's /proc entry
 * after it was waited for (cutime + cstime), so a busy machine does not inflate it.
 */
export function nativeMujocoRate(
  scenes: readonly MjcfScene[],
  seconds: number,
  stepS: number,
): StepRate & { readonly version: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-mujoco-bench-'));
  let cpuS = 0;
  let wallS = 0;
  let steps = 0;
  let version = '';
  try {
    // testspeed does not print its version; Debian's package does.
    const pkg = spawnSync('dpkg-query', ['-W', '-f', '${Version}', 'libmujoco-samples'], { encoding: 'utf8' });
    version = pkg.status === 0 ? pkg.stdout.trim() : '';
    const tick = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
    scenes.forEach((scene, n) => {
      const file = join(dir, `scene-${n}.xml`);
      writeFileSync(file, scene.xml);
      const nSteps = Math.round(seconds / stepS);
      const w0 = performance.now();
      const r = spawnSync(
        'sh',
        ['-c', `mujoco-testspeed "$1" "$2" 1 0 && cat /proc/$$/stat >&2`, 'sh', file, String(nSteps)],
        { encoding: 'utf8' },
      );
      wallS += (performance.now() - w0) / 1000;
      if (r.status !== 0)
        throw new Error(
          `mujoco-testspeed failed on the exported scene: ${(r.stdout + r.stderr).trim().split('\n').slice(-3).join(' ')}`,
        );
      // /proc/PID/stat: fields after the ")" of the command name; cutime and cstime are fields 16 and 17.
      const fields = r.stderr
        .slice(r.stderr.lastIndexOf(')') + 2)
        .trim()
        .split(/\s+/);
      cpuS += (Number(fields[13]) + Number(fields[14])) / tick;
      steps += nSteps;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { simS: steps * stepS, cpuS, wallS, steps, version };
}
