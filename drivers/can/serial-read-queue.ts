/**
 * The read side of a serialport binding port (the @serialport/bindings-interface contract): bytes
 * arrive in chunks of any size, and one read at a time takes up to its `length` of them — at once
 * when some are waiting, else when the next chunk comes. Shared by the tty binding (the rig
 * thread's ports) and the emulated binding, so the stream gets its bytes the same way from both.
 */
type ReadResult = { buffer: Buffer; bytesRead: number };

export class SerialReadQueue {
  private readonly rx: Buffer[] = [];
  private pending:
    | { buffer: Buffer; offset: number; length: number; resolve: (r: ReadResult) => void; reject: (e: Error) => void }
    | undefined;

  /** Bytes from the device: they serve a waiting read, or wait for the next. */
  push(bytes: Buffer): void {
    this.rx.push(bytes);
    this.serve();
  }

  read(buffer: Buffer, offset: number, length: number): Promise<ReadResult> {
    if (this.pending) return Promise.reject(new Error('a read is already pending'));
    return new Promise((resolve, reject) => {
      this.pending = { buffer, offset, length, resolve, reject };
      this.serve();
    });
  }

  /** Fails the waiting read, if any (the port closed, or the device went away). */
  rejectPending(e: Error): void {
    const r = this.pending;
    this.pending = undefined;
    r?.reject(e);
  }

  /** Drops the bytes nobody has read yet (the port's flush). */
  clear(): void {
    this.rx.length = 0;
  }

  private serve(): void {
    const r = this.pending;
    if (!r || this.rx.length === 0) return;
    this.pending = undefined;
    let n = 0;
    while (n < r.length && this.rx.length > 0) {
      const head = this.rx[0];
      const take = Math.min(head.length, r.length - n);
      head.copy(r.buffer, r.offset + n, 0, take);
      n += take;
      if (take === head.length) this.rx.shift();
      else this.rx[0] = head.subarray(take);
    }
    r.resolve({ buffer: r.buffer, bytesRead: n });
  }
}
