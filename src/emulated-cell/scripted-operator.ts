/**
 * The emulated cell's scripted operator: places a layout from its projected outlines (the cell
 * world does, with PLACEMENT_SIGMA_M / PLACEMENT_SIGMA_YAW_RAD of seeded noise) and scores a
 * rollout by looking at the table — each object's end state in the task's own terms, the same
 * shape a human operator enters, stored as an operator score under this name.
 */
export const SCRIPTED_OPERATOR = 'scripted operator (emulated cell)';
