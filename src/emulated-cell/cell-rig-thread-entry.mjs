// Entry of the emulated cell's rig thread: worker threads do not inherit the parent's module hooks,
// so the worker registers tsx itself (as the yam-can rig thread does) and then loads the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./cell-rig-thread-worker.ts');
