// Entry of the emulated cell's thread: worker threads do not inherit the parent's module hooks, so
// the worker registers tsx itself (as the rig thread does) and then loads the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./cell-thread-worker.ts');
