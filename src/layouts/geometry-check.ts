/**
 * The sampler's placement rules as a check of any layout — used on hand-edited sets before a bump,
 * so an operator learns that a moved bottle now sits out of reach before a session does.
 */
import { armsReaching, TABLE_RECT } from '../tasks/station.js';
import {
  fixtureFootprint,
  objectFootprint,
  rectCorners,
  rectInside,
  rectsOverlap,
  toFixtureFrame,
  type OrientedRect,
} from '../tasks/footprint.js';
import { fixtureKindOf, objectKindOf } from '../tasks/registry.js';
import type { Layout, TaskDefinition } from '../tasks/types.js';
import { ARM_BASE_RECTS, ARM_KEEP_OUT_RECTS, armKeepOutsFor } from './sample.js';

/** Sentences naming each placement rule the layout breaks; empty when it keeps them all. */
export function layoutProblems(task: TaskDefinition, layout: Layout): string[] {
  const problems: string[] = [];
  const at = `layout ${layout.index}`;
  const fixtures: { id: string; rect: OrientedRect }[] = [];
  for (const f of layout.fixtures) {
    const kind = fixtureKindOf(task, f.kind);
    if (!kind) continue;
    const rect = fixtureFootprint(kind, f.pose);
    if (!rectInside(rect, TABLE_RECT)) problems.push(`${at}: the ${f.id} reaches past the table edge.`);
    if (ARM_BASE_RECTS.some((b) => rectsOverlap(b, rect))) problems.push(`${at}: the ${f.id} stands on an arm base.`);
    else if (armKeepOutsFor(kind).some((k) => rectsOverlap(k, rect)))
      problems.push(`${at}: the ${f.id} stands where an arm rests at home.`);
    fixtures.push({ id: f.id, rect });
  }
  const placed: { id: string; rect: OrientedRect; inFixture?: string }[] = [];
  for (const o of layout.objects) {
    const kind = objectKindOf(task, o.kind);
    if (!kind) continue;
    const rect = objectFootprint(kind, o.posture, o.pose);
    if (armsReaching(o.pose.x, o.pose.y).length === 0) problems.push(`${at}: ${o.id} is out of reach of both arms.`);
    if (o.inFixture) {
      const host = layout.fixtures.find((f) => f.id === o.inFixture);
      const region = host ? fixtureKindOf(task, host.kind)?.regions[0] : undefined;
      if (host && region) {
        const inside = rectCorners(rect).every(([x, y]) => {
          const [lx, ly] = toFixtureFrame(host.pose, x, y);
          return (
            Math.abs(lx - region.centerM[0]) <= region.sizeM[0] / 2 &&
            Math.abs(ly - region.centerM[1]) <= region.sizeM[1] / 2
          );
        });
        if (!inside) problems.push(`${at}: ${o.id} is not inside the ${host.id}.`);
      }
    } else {
      if (!rectInside(rect, task.workspace)) problems.push(`${at}: ${o.id} lies outside the ${task.id} workspace.`);
      for (const f of fixtures) if (rectsOverlap(f.rect, rect)) problems.push(`${at}: ${o.id} overlaps the ${f.id}.`);
      if (ARM_BASE_RECTS.some((b) => rectsOverlap(b, rect))) problems.push(`${at}: ${o.id} lies on an arm base.`);
      else if (ARM_KEEP_OUT_RECTS.some((k) => rectsOverlap(k, rect)))
        problems.push(`${at}: ${o.id} lies where an arm rests at home.`);
    }
    for (const p of placed) {
      if (p.inFixture === o.inFixture && rectsOverlap(p.rect, rect)) problems.push(`${at}: ${o.id} overlaps ${p.id}.`);
    }
    placed.push({ id: o.id, rect, ...(o.inFixture ? { inFixture: o.inFixture } : {}) });
  }
  return problems;
}
