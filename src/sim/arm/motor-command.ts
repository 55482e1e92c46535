/** What the motor drivers ask of one sim arm each physics step: the MIT law's terms per joint and the gripper's. */
export interface MotorCommand {
  /** Per arm joint (6): target position/velocity, gains, feedforward torque. */
  readonly q: Float64Array;
  readonly dq: Float64Array;
  readonly kp: Float64Array;
  readonly kd: Float64Array;
  readonly tauFf: Float64Array;
  /** Gripper, normalised 0 closed … 1 open, and the motor gains (kp = 0: limp). */
  gripper: number;
  gripperKp: number;
  gripperKd: number;
}

export function newMotorCommand(): MotorCommand {
  return {
    q: new Float64Array(6),
    dq: new Float64Array(6),
    kp: new Float64Array(6),
    kd: new Float64Array(6),
    tauFf: new Float64Array(6),
    gripper: 1,
    gripperKp: 0,
    gripperKd: 0,
  };
}
