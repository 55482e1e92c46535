/**
 * Projector frames as PNG: an SVG in projector pixels rasterised by sharp (librsvg), and the
 * all-black frame shown before every rollout.
 */
import type { ProjectorResolution } from './calibration-record.js';

/** Rasterises an SVG drawn at the projector's resolution; opaque RGB, no alpha for a display to blend. */
export async function svgToPng(svg: string): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  return sharp(Buffer.from(svg), { density: 72 }).flatten({ background: '#000' }).removeAlpha().png().toBuffer();
}

/** An all-black frame: what the projector shows while the arms move, so no light pattern reaches the cameras. */
export async function blankPng(res: ProjectorResolution): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  return sharp({ create: { width: res.widthPx, height: res.heightPx, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .png()
    .toBuffer();
}
