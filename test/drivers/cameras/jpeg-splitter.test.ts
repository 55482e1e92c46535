import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sharp from 'sharp';
import { JpegSplitter } from '../../../drivers/cameras/jpeg-splitter.js';

/** A real JPEG of a noisy gradient (entropy data full of 0xFF-stuffed bytes), as sharp writes it. */
async function jpeg(width: number, height: number, seed: number, progressive = false): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let s = seed;
  for (let i = 0; i < raw.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = (i % 251) ^ (s >> 16);
  }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90, progressive })
    .toBuffer();
}

/** The same JPEG with an EXIF-style APP1 segment right after SOI holding a whole thumbnail JPEG (its own SOI … EOI). */
function withThumbnail(main: Buffer, thumb: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from('Exif\0\0'), thumb]);
  const seg = Buffer.alloc(4);
  seg.writeUInt16BE(0xffe1, 0);
  seg.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([main.subarray(0, 2), seg, body, main.subarray(2)]);
}

function splitAt(stream: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let last = 0;
  for (const p of points) {
    out.push(stream.subarray(last, p));
    last = p;
  }
  out.push(stream.subarray(last));
  return out;
}

test('an MJPEG stream cut anywhere gives back every JPEG whole, with its size, including thumbnails inside EXIF and progressive frames', async () => {
  const thumb = await jpeg(16, 16, 9);
  const frames = [
    await jpeg(64, 48, 1),
    withThumbnail(await jpeg(40, 30, 2), thumb),
    await jpeg(32, 32, 3, true),
    await jpeg(224, 224, 4),
  ];
  const sizes = [
    [64, 48],
    [40, 30],
    [32, 32],
    [224, 224],
  ];
  const stream = Buffer.concat(frames);
  await fc.assert(
    fc.asyncProperty(fc.array(fc.nat(), { maxLength: 40 }), async (cuts) => {
      const s = new JpegSplitter();
      const got = splitAt(stream, cuts).flatMap((c) => s.push(c));
      assert.equal(got.length, frames.length);
      got.forEach((f, i) => {
        assert.ok(f.data.equals(frames[i]), `frame ${i} is byte-identical`);
        assert.deepEqual([f.width, f.height], sizes[i]);
      });
      assert.equal(s.discardedFrames, 0);
      assert.equal(s.pendingBytes, 0);
    }),
    { numRuns: 60 },
  );
  // The thumbnail's own EOI did not end the frame early: it still decodes at its full size.
  const meta = await sharp(frames[1]).metadata();
  assert.equal(meta.width, 40);
});

test('garbage between frames is skipped, and a frame cut off mid-scan is thrown away without losing the next', async () => {
  const a = await jpeg(32, 24, 5);
  const b = await jpeg(48, 32, 6);
  const s = new JpegSplitter();
  const got = s.push(
    Buffer.concat([Buffer.from([1, 2, 0xff, 3]), a, Buffer.from('noise'), a.subarray(0, a.length - 300), b]),
  );
  assert.equal(got.length, 2);
  assert.ok(got[0].data.equals(a));
  assert.ok(got[1].data.equals(b));
  assert.equal(s.discardedFrames, 1, 'the cut-off frame is counted');
  assert.equal(s.skippedBytes, 4 + 5);
});
