/**
 * The station API's shapes: requests, responses and the event stream, shared by the server
 * (src/server) and the operator UI (station-ui). Pure — no Node built-ins — so the UI bundles it.
 * Everything the UI shows comes through these types; the UI never touches the rig or the store.
 */
export * from './api/station.js';
export * from './api/rig.js';
export * from './api/rollouts.js';
export * from './api/compare.js';
export * from './api/events.js';
export * from './api/projector.js';
export * from './api/session.js';
export * from './api/teleop.js';
export * from './api/uploads.js';
