// Entry of the episode-file writer thread: worker threads do not inherit the parent's module hooks,
// so the thread registers tsx itself (as the policy and sweep workers do), then loads the writer.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread.ts');
