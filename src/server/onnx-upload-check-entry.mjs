// Entry of the ONNX upload checker: worker threads do not inherit the parent's module hooks, so the
// worker registers tsx itself (as the report and policy workers do).
import { register } from 'tsx/esm/api';

register();
await import('./onnx-upload-check-worker.ts');
