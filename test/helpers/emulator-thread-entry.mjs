// Entry of the YAM emulator thread used by tests and benchmarks: registers tsx, then loads it.
import { register } from 'tsx/esm/api';

register();
await import('./emulator-thread-worker.ts');
