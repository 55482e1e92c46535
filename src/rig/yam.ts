/**
 * The YAM arm as the public I2RT software (v1.2.4) describes it: kinematics, limits, masses,
 * motors and default gains. One model feeds the sim, the safety limits, URDF export and the UI.
 */
import type { ArmModel, ArmSide, JointSpec, MotorModelId, RigModel } from './contract.js';
import type { Pose3 } from '../tasks/geometry.js';
import { MOTOR_RANGES } from './motors.js';
import { ARM_BASE_XY_M, ARM_BASE_YAW_RAD } from '../tasks/station.js';

/** One joint of the kinematic chain: parent → child origin, rpy applied as R = Rz·Ry·Rx. */
export interface ChainJoint {
  readonly name: string;
  readonly parent: string;
  readonly child: string;
  readonly xyz: readonly [number, number, number];
  readonly rpy: readonly [number, number, number];
  readonly axis: readonly [number, number, number];
}

const PI = Math.PI;
export const YAM_CHAIN: readonly ChainJoint[] = [
  { name: 'joint1', parent: 'base_link', child: 'link1', xyz: [0, 0, 0.068], rpy: [0, PI / 2, PI], axis: [-1, 0, 0] },
  {
    name: 'joint2',
    parent: 'link1',
    child: 'link2',
    xyz: [-0.0455, -0.0339, -0.02],
    rpy: [0, 0, -PI],
    axis: [0, 1, 0],
  },
  { name: 'joint3', parent: 'link2', child: 'link3', xyz: [0, -0.0688, 0.264], rpy: [0, 0, -PI], axis: [0, 1, 0] },
  {
    name: 'joint4',
    parent: 'link3',
    child: 'link4',
    xyz: [-0.0600003, -0.0688, -0.244999],
    rpy: [0, 0, 0],
    axis: [0, 1, 0],
  },
  {
    name: 'joint5',
    parent: 'link4',
    child: 'link5',
    xyz: [-0.0405003, 0.0338995, -0.0739989],
    rpy: [0, 0, 0],
    axis: [1, 0, 0],
  },
  { name: 'joint6', parent: 'link5', child: 'gripper', xyz: [0.0404996, 0, -0.0356], rpy: [0, 0, 0], axis: [0, 0, -1] },
];

/** Link masses, kg. */
export const YAM_LINK_MASS_KG: Readonly<Record<string, number>> = {
  base_link: 0.873654,
  link1: 0.101218,
  link2: 1.46908,
  link3: 0.982553,
  link4: 0.462165,
  link5: 0.403307,
  gripper: 0.553219,
};
export const YAM_FINGER_MASS_KG = 0.069657;

/** Bench-measured joint limits, rad. The vendor widens each by ±0.15 rad for clamping. */
export const YAM_JOINT_LIMITS_RAD: readonly (readonly [number, number])[] = [
  [-2.61799, 3.14159],
  [0, 3.66519],
  [0, 3.14159],
  [-1.69297, 1.5708],
  [-1.5708, 1.5708],
  [-2.0944, 2.0944],
];
/** Margin the vendor adds to each limit for clamping. */
export const YAM_LIMIT_BUFFER_RAD = 0.15;
/** A measured position this far beyond the widened limit means a wrong zero offset: refuse to run. */
export const YAM_WRONG_ZERO_RAD = 0.1;

const MOTORS: readonly MotorModelId[] = ['DM4340', 'DM4340', 'DM4340', 'DM4310', 'DM4310', 'DM4310'];
export const YAM_KP: readonly number[] = [80, 80, 80, 10, 10, 10];
export const YAM_KD: readonly number[] = [5, 5, 5, 1.5, 1.5, 1.5];
export const YAM_GRAVITY_COMP_SCALE: readonly number[] = [1.0, 1.1, 1.1, 1.2, 1.0, 1.0];
export const YAM_IDLE_DAMPING: readonly number[] = [0.1, 0.1, 0.1, 0.3, 0.05, 0.05];
export const YAM_COULOMB_FRICTION_NM: readonly number[] = [0.3, 0.3, 0.3, 0.06, 0.06, 0.06];

/**
 * Home end-effector position in the base frame at q = 0: the joint origins of the vendor's URDF
 * (i2rt-robotics/i2rt, i2rt/robot_models/arm/yam/yam.urdf, dof_joint0–6) composed, in our base
 * frame (the URDF's root turned +90° about z). test/rig/kinematics.test.ts recomputes it from the
 * URDF's numbers.
 */
export const YAM_HOME_EE_POSITION_M: readonly [number, number, number] = [0.110597, 0, 0.173502];

/** Default station: arms on the table's near edge, 0.6 m apart, facing +x (src/tasks/station.ts). */
const baseQuaternion = [0, 0, Math.sin(ARM_BASE_YAW_RAD / 2), Math.cos(ARM_BASE_YAW_RAD / 2)] as const;
export const DEFAULT_BASE_POSES: Readonly<Record<ArmSide, Pose3>> = {
  left: { position: [ARM_BASE_XY_M.left[0], ARM_BASE_XY_M.left[1], 0], quaternion: baseQuaternion },
  right: { position: [ARM_BASE_XY_M.right[0], ARM_BASE_XY_M.right[1], 0], quaternion: baseQuaternion },
};

export function yamArm(side: ArmSide, basePose: Pose3 = DEFAULT_BASE_POSES[side]): ArmModel {
  const joints: JointSpec[] = YAM_CHAIN.map((c, i) => ({
    name: `${side}_${c.name}`,
    minRad: YAM_JOINT_LIMITS_RAD[i][0],
    maxRad: YAM_JOINT_LIMITS_RAD[i][1],
    maxVelocityRadS: MOTOR_RANGES[MOTORS[i]].vMaxRadS,
    maxTorqueNm: MOTOR_RANGES[MOTORS[i]].tMaxNm,
    motor: MOTORS[i],
    kp: YAM_KP[i],
    kd: YAM_KD[i],
  }));
  return {
    side,
    joints,
    gripper: {
      name: `${side}_gripper`,
      motor: 'DM4310',
      strokeM: 0.096,
      motorTravelRad: 6.57,
      kp: 20,
      kd: 0.5,
      maxTorqueNm: MOTOR_RANGES.DM4310.tMaxNm,
    },
    basePose,
  };
}

/** The two-arm YAM rig. Base poses come from the station config. */
export function yamRigModel(basePoses: Partial<Record<ArmSide, Pose3>> = {}): RigModel {
  return { name: 'yam-bimanual', arms: [yamArm('left', basePoses.left), yamArm('right', basePoses.right)] };
}
