/** A layout set that cannot be sampled, read or trusted; the message is one sentence for the operator. */
export class LayoutSetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LayoutSetError';
  }
}
