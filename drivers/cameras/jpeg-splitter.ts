/**
 * Splits an MJPEG byte stream (ffmpeg's `-f mjpeg` output: JPEG images back to back) into whole
 * JPEG frames, each with the size its frame header states.
 *
 * Hand-written: the one maintained npm splitter for ffmpeg pipes (pipe2jpeg) is not a dependency
 * here, and a plain SOI/EOI search is wrong for real cameras — an EXIF thumbnail inside APP1
 * carries its own SOI/EOI pair. So this walks the marker segments by their lengths up to the scan,
 * and inside entropy-coded data a marker is any 0xFF not followed by 0x00 (a stuffed byte),
 * 0xFF (fill) or a restart marker 0xD0–0xD7 (JPEG, ITU T.81 B.1.1). Progressive JPEGs (several
 * scans) and restart intervals pass through. Bytes between frames that are not a JPEG are
 * skipped and counted, and a frame that breaks the marker syntax is discarded and counted.
 */

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;
/** A frame larger than this is not a camera frame (a 4K MJPEG frame is ≈1–2 MB). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export interface JpegFrame {
  /** The whole JPEG, SOI to EOI (a copy: safe to keep). */
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
}

type State = 'seek' | 'marker' | 'entropy';

/** Start-of-frame markers carry the image size (all SOFn except DHT C4, JPG C8 and DAC CC). */
function isSof(m: number): boolean {
  return m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
}

export class JpegSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private start = -1;
  private state: State = 'seek';
  private width = 0;
  private height = 0;
  /** Bytes outside any frame (garbage, a truncated start) skipped so far. */
  skippedBytes = 0;
  /** Frames started but broken (bad marker syntax, over MAX_FRAME_BYTES), thrown away so far. */
  discardedFrames = 0;

  /** Feeds the next bytes; returns the frames they completed, in order. */
  push(chunk: Uint8Array): JpegFrame[] {
    this.buf = this.buf.length === this.pos && this.start < 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk]);
    const out: JpegFrame[] = [];
    for (;;) {
      const f = this.next();
      if (f === undefined) break;
      out.push(f);
    }
    // Keep only what a frame still needs.
    const keepFrom = this.start >= 0 ? this.start : this.pos;
    if (keepFrom > 0) {
      this.buf = this.buf.subarray(keepFrom);
      this.pos -= keepFrom;
      if (this.start >= 0) this.start = 0;
    }
    if (this.start >= 0 && this.pos > MAX_FRAME_BYTES) this.discard(this.pos);
    return out;
  }

  /** Bytes held for an unfinished frame. */
  get pendingBytes(): number {
    return this.start >= 0 ? this.buf.length - this.start : 0;
  }

  private discard(resumeAt: number): void {
    this.discardedFrames += 1;
    this.start = -1;
    this.state = 'seek';
    this.pos = resumeAt;
  }

  /** Advances through the buffer; a completed frame, or undefined when more bytes are needed. */
  private next(): JpegFrame | undefined {
    const b = this.buf;
    for (;;) {
      if (this.state === 'seek') {
        const i = b.indexOf(0xff, this.pos);
        if (i < 0 || i + 1 >= b.length) {
          // Keep a trailing 0xFF: it may be half of the next SOI.
          const end = i < 0 ? b.length : i;
          this.skippedBytes += end - this.pos;
          this.pos = end;
          return undefined;
        }
        if (b[i + 1] === SOI) {
          this.skippedBytes += i - this.pos;
          this.start = i;
          this.pos = i + 2;
          this.width = this.height = 0;
          this.state = 'marker';
        } else {
          this.skippedBytes += i + 1 - this.pos;
          this.pos = i + 1;
        }
        continue;
      }
      if (this.state === 'marker') {
        // Fill bytes (0xFF) may precede a marker.
        let i = this.pos;
        while (i < b.length && b[i] === 0xff && i + 1 < b.length && b[i + 1] === 0xff) i++;
        if (i + 1 >= b.length) return undefined;
        if (b[i] !== 0xff) {
          this.discard(i); // not a marker where one must be: the frame is broken
          continue;
        }
        const m = b[i + 1];
        if (m === EOI) {
          const data = Buffer.from(b.subarray(this.start, i + 2));
          const frame: JpegFrame = { data, width: this.width, height: this.height };
          this.pos = i + 2;
          this.start = -1;
          this.state = 'seek';
          return frame;
        }
        if (m === SOI) {
          this.discard(i); // a new frame began before this one ended
          continue;
        }
        if ((m >= 0xd0 && m <= 0xd7) || m === 0x01) {
          this.pos = i + 2; // markers without a length
          continue;
        }
        if (i + 4 > b.length) return undefined;
        const len = b.readUInt16BE(i + 2);
        if (len < 2) {
          this.discard(i + 2);
          continue;
        }
        const segEnd = i + 2 + len;
        if (segEnd > b.length) {
          if (segEnd - this.start > MAX_FRAME_BYTES) this.discard(i + 2);
          else return undefined;
          continue;
        }
        if (isSof(m) && len >= 7) {
          this.height = b.readUInt16BE(i + 5);
          this.width = b.readUInt16BE(i + 7);
        }
        this.pos = segEnd;
        if (m === SOS) this.state = 'entropy';
        continue;
      }
      // Entropy-coded data: runs to the next 0xFF that starts a marker.
      let i = this.pos;
      for (;;) {
        i = b.indexOf(0xff, i);
        if (i < 0 || i + 1 >= b.length) {
          // Resume at the undecided 0xFF (or the end) once more bytes come.
          this.pos = i < 0 ? b.length : i;
          return undefined;
        }
        const n = b[i + 1];
        if (n === 0x00 || (n >= 0xd0 && n <= 0xd7)) {
          i += 2;
          continue;
        }
        if (n === 0xff) {
          i += 1;
          continue;
        }
        break;
      }
      this.pos = i;
      this.state = 'marker';
    }
  }
}
