// Entry of the compare view's report thread: worker threads do not inherit the parent's module
// hooks, so the worker registers tsx itself (as the sweep and policy workers do).
import { register } from 'tsx/esm/api';

register();
await import('./report-thread-worker.ts');
