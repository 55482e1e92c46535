/** A layout set that cannot be sampled, read or trusted; the message is one sentence for the operator. */
export class LayoutSetError extends Error {
  constructor(
    message: string,
    /** Set when the contents do not match the recorded hash. */
    readonly hashMismatch?: { readonly expected: string; readonly found: string },
  ) {
    super(message);
    this.name = 'LayoutSetError';
  }
}
