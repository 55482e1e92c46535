/** A fit that cannot run; one sentence. */
export class SysidError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SysidError';
  }
}
