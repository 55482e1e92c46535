/** A policy that cannot be opened (missing file, not ONNX, inputs tandem cannot feed, bad spec): one sentence for the operator. */
export class PolicyLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyLoadError';
  }
}
