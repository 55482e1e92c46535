/**
 * The Rig view: every motor's state and temperature, faults in words, the rig's controls, the
 * motor loop's statistics, the emulated cell's real-time margin (all from the event stream), and
 * the calibrations in use and in the store (asked for when the page is shown).
 */
import type { CalibrationsView, MotorStatus, RigLoopView, RigStatus } from '../../src/server/api-types.js';
import { clear, fixed, h, stamp } from '../dom.js';
import { groupedFaults, modeWords, rigWords, useWords } from '../words.js';

export interface RigViewActions {
  hold(): void;
  damp(): void;
}

const TEMP_WARN_C = 60;

function tempCell(c: number | null): HTMLTableCellElement {
  const td = h('td', { class: 'num' }, c === null ? '—' : `${c.toFixed(0)} °C`);
  if (c !== null && c >= TEMP_WARN_C) td.append(' ', h('span', { class: 'pill warn' }, 'hot'));
  return td;
}

function motorRow(m: MotorStatus): HTMLTableRowElement {
  return h(
    'tr',
    { class: m.fault ? 'fault' : undefined, 'data-motor': m.name },
    h('td', {}, m.index === 6 ? 'gripper' : `joint ${m.index + 1}`),
    h('td', { class: 'num' }, `0x${m.canId.toString(16).padStart(2, '0')}`),
    h('td', {}, m.model),
    h('td', { class: 'num' }, fixed(m.positionRad, 3)),
    h('td', { class: 'num' }, fixed(m.velocityRadS, 2)),
    h('td', { class: 'num' }, fixed(m.torqueNm, 2)),
    tempCell(m.mosfetTempC),
    tempCell(m.rotorTempC),
    h(
      'td',
      { class: 'words' },
      h('span', { class: `pill ${m.fault ? 'bad' : m.status === 'enabled' ? 'ok' : 'idle'}` }, m.status),
    ),
  );
}

const MOTOR_COLUMNS: readonly (readonly [string, string])[] = [
  ['motor', 'joint or gripper of this arm'],
  ['CAN', "the motor's CAN id on its bus"],
  ['model', 'Damiao motor model'],
  ['pos rad', 'position, radians'],
  ['vel rad/s', 'velocity, radians per second'],
  ['torque N·m', 'measured torque'],
  ['driver °C', "the motor driver's power stage (MOSFET) temperature"],
  ['motor °C', 'the rotor (winding) temperature'],
  ['status', 'enabled, disabled or faulted'],
];

/** A loop keeps up when it runs within 1% of its rate and its p99 wake-up is under a millisecond. */
function loopVerdict(l: RigLoopView): string {
  if (l.achievedHz >= l.rateHz * 0.99 && l.jitterP99Ms < 1) return 'keeping up';
  return l.achievedHz < l.rateHz * 0.95 ? 'falling behind — the machine is too busy' : 'late now and then';
}

function showLoop(dl: HTMLElement, l: RigLoopView | null): void {
  clear(dl);
  if (!l) {
    dl.append(h('dt', {}, '—'), h('dd', {}, 'No loop has run yet: press Hold pose.'));
    return;
  }
  const where =
    l.measuredBy === 'rig thread'
      ? 'the rig thread (the motors do not wait for the station)'
      : "the station's hold loop";
  dl.append(
    h('dt', {}, 'rate'),
    h('dd', {}, `${fixed(l.achievedHz, 1)} Hz of ${l.rateHz} Hz — ${loopVerdict(l)}`),
    h('dt', { title: 'how late each cycle woke after its deadline' }, 'jitter'),
    h(
      'dd',
      {},
      `p50 ${fixed(l.jitterP50Ms, 2)} ms, p99 ${fixed(l.jitterP99Ms, 2)} ms, max ${fixed(l.jitterMaxMs, 2)} ms`,
    ),
    h(
      'dt',
      { title: 'cycles that woke over half a period late; cycles whose work ran past the next deadline' },
      'late / overruns',
    ),
    h('dd', {}, `${l.lateCycles} late, ${l.overruns} overruns in ${l.cycles} cycles`),
    h('dt', { title: "times the safety supervisor held because the station's commands went stale" }, 'watchdog holds'),
    h('dd', {}, l.watchdogHolds === null ? '— (listed under Safety events)' : String(l.watchdogHolds)),
    h('dt', { title: 'the oldest the latest command got while the motors were on' }, 'longest command age'),
    h('dd', {}, l.longestCommandAgeMs === null ? '—' : `${fixed(l.longestCommandAgeMs, 0)} ms`),
    h('dt', {}, 'measured by'),
    h('dd', {}, where),
  );
}

export class RigView {
  private readonly motors = h('tbody');
  private readonly faults = h('ul', { class: 'faults' });
  private readonly events = h('ul', { class: 'faults events' });
  private readonly cell = h('dl', { class: 'kv' });
  private readonly loop = h('dl', { class: 'kv', id: 'motor-loop' });
  private readonly state = h('dl', { class: 'kv' });
  private readonly calibrations = h('div', { id: 'rig-calibrations' }, h('p', { class: 'muted' }, 'Loading…'));
  private readonly holdBtn = h('button', { class: 'btn primary', id: 'hold' }, 'Hold pose', h('kbd', {}, 'H'));
  private readonly dampBtn = h('button', { class: 'btn', id: 'damp' }, 'Damp', h('kbd', {}, 'D'));

  constructor(root: HTMLElement, actions: RigViewActions) {
    this.holdBtn.onclick = () => actions.hold();
    this.dampBtn.onclick = () => actions.damp();
    const table = h(
      'table',
      { id: 'motor-table' },
      // Words an operator reads from the desk; the hardware names stay in each header's tooltip.
      h('thead', {}, h('tr', {}, ...MOTOR_COLUMNS.map(([t, detail]) => h('th', { title: detail }, t)))),
      this.motors,
    );
    root.append(
      h(
        'div',
        { class: 'grid' },
        h('div', {}, h('div', { class: 'panel' }, h('h2', {}, 'Motors'), table)),
        h(
          'div',
          {},
          h(
            'div',
            { class: 'panel' },
            h('h2', {}, 'Controls'),
            h('div', { class: 'actions' }, this.holdBtn, this.dampBtn),
            h('h3', {}, 'State'),
            this.state,
          ),
          h('div', { class: 'panel' }, h('h2', {}, 'Faults'), this.faults),
          h(
            'div',
            { class: 'panel' },
            h(
              'h2',
              {
                title: 'what the loop that commands the motors measured about itself since the rig was last activated',
              },
              'Motor loop',
            ),
            this.loop,
          ),
          h('div', { class: 'panel' }, h('h2', {}, 'Emulated cell'), this.cell),
          h('div', { class: 'panel' }, h('h2', {}, 'Safety events'), this.events),
          h('div', { class: 'panel' }, h('h2', {}, 'Calibrations'), this.calibrations),
        ),
      ),
    );
  }

  showCalibrations(c: CalibrationsView): void {
    clear(this.calibrations);
    const id = (sha: string | null, version: number | null): string =>
      [version !== null ? `v${version}` : '', sha ? `${sha.slice(0, 12)}…` : ''].filter(Boolean).join(' · ');
    const inUse = h('dl', { class: 'kv' });
    for (const u of c.inUse)
      inUse.append(
        h('dt', {}, u.what),
        h(
          'dd',
          { title: u.sha256 ?? '' },
          `${u.name}${id(u.sha256, u.version) ? ` (${id(u.sha256, u.version)})` : ''}`,
          h('div', { class: 'muted' }, u.note),
        ),
      );
    const stored = h('dl', { class: 'kv' });
    for (const k of c.stored)
      stored.append(
        h('dt', {}, k.kind),
        h(
          'dd',
          { title: k.newest.sha256 },
          `${k.count} stored; newest ${id(k.newest.sha256, k.newest.version)}, ${stamp(k.newest.createdAt)}`,
        ),
      );
    if (c.stored.length === 0) stored.append(h('dt', {}, '—'), h('dd', {}, 'None stored yet.'));
    this.calibrations.append(h('h3', {}, 'In use'), inUse, h('h3', {}, 'In the store'), stored);
  }

  show(rig: RigStatus): void {
    const busy = rig.use === 'rollout' || rig.use === 'changing';
    this.holdBtn.disabled = busy;
    this.dampBtn.disabled = busy;
    clear(this.motors);
    let arm = '';
    for (const m of rig.motors) {
      if (m.arm !== arm) {
        arm = m.arm;
        this.motors.append(h('tr', { class: 'group' }, h('td', { colspan: 9 }, `${arm} arm`)));
      }
      this.motors.append(motorRow(m));
    }
    if (rig.motors.length === 0)
      this.motors.append(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'This rig reports no per-motor state.')));

    clear(this.faults);
    if (rig.faults.length === 0) this.faults.append(h('li', { class: 'none' }, 'No faults.'));
    for (const f of groupedFaults(rig.faults.map((x) => x.message))) this.faults.append(h('li', {}, f));
    if (rig.note) this.faults.append(h('li', {}, rig.note));

    clear(this.state);
    this.state.append(
      h('dt', {}, 'mode'),
      h('dd', {}, modeWords(rig).words),
      h('dt', {}, 'doing'),
      h('dd', {}, useWords(rig) || '—'),
      h('dt', {}, 'rig'),
      h('dd', { title: `rig config type: ${rig.type}` }, rigWords(rig.type)),
    );

    showLoop(this.loop, rig.loop);

    clear(this.cell);
    if (!rig.cell) this.cell.append(h('dt', {}, '—'), h('dd', {}, 'Not an emulated cell: hardware.'));
    else {
      const c = rig.cell;
      this.cell.append(
        h('dt', {}, 'table'),
        h('dd', {}, `${c.task}, tier ${c.tier}, ${c.objects} objects`),
        h('dt', { title: 'how much faster than real time the emulated world could run on this machine' }, 'keeping up'),
        h(
          'dd',
          {},
          c.marginX === null
            ? 'not measured yet'
            : `${c.marginX >= 1.5 ? 'yes' : c.marginX >= 1 ? 'only just' : 'no — the machine is too busy'} (${c.marginX.toFixed(1)}× real time; the world uses ${(c.busyFraction * 100).toFixed(0)}% of a core)`,
        ),
        h('dt', {}, 'worst lag'),
        h('dd', {}, `${c.maxLagMs.toFixed(0)} ms${c.behindEvents ? `, fell behind ${c.behindEvents}×` : ''}`),
      );
    }

    clear(this.events);
    if (rig.recentEvents.length === 0)
      this.events.append(h('li', { class: 'none' }, 'None since the station started.'));
    for (const e of [...rig.recentEvents].reverse())
      this.events.append(h('li', {}, `${stamp(e.at).slice(11)} — ${e.message}`));
  }
}
