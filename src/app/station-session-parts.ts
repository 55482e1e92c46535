/** The Session view's parts on the station: the rig host's rig, the cell's interlocks, the projector. */
import { EPISODE_CONTROL_HZ } from '../rollout/run-episode.js';
import type { Store } from '../store/store.js';
import { RigHost } from '../server/rig-host.js';
import { ApiRefusal } from '../server/request-checks.js';
import { UserError } from './command.js';
import type { RigServices } from './services/rig-services.js';
import { preflight } from './preflight.js';
import { leaderSpecOf, type StationConfig } from './station-config.js';
import type { SessionParts } from '../server/session-host.js';
import { RigSessionRunner } from './session-runner.js';
import { SessionTakeover } from './session-takeover.js';
import { measuredCost } from './measured-rollout-cost.js';
import { sessionInterlocks } from './session-interlocks.js';
import type { CellIo } from './cell-io.js';
import type { PlacementGate, SessionProjector } from '../session/ports.js';

/** The cell's interlocks in the session's words: the PLC's reading now, or that there is no cell I/O. */
export function interlockReading(cellIo: CellIo): { open: boolean; words: string } {
  const c = cellIo.plc.current();
  return c.open
    ? {
        open: true,
        words: `OPEN — ${(c.reason ?? 'an interlock of the cell is open').replace(/\.$/, '')}; nothing starts until it closes`,
      }
    : {
        open: false,
        words: `closed (cell PLC ${cellIo.config.endpointUrl}): e-stop circuit, door and light curtain report safe`,
      };
}

function interlockWords(cellIo: CellIo | undefined): () => string {
  if (!cellIo) return () => 'no cell I/O configured: the station E-STOP stops the arms';
  return () => interlockReading(cellIo).words;
}

/**
 * The Session view's parts: the plan's policies on the station's own rig (the rig host owns it,
 * shows it live, takes the E-stop), the cell's interlocks and tower light, the projector.
 */
export function sessionParts(
  store: Store,
  host: RigHost<RigServices>,
  station: StationConfig,
  cwd: string,
  episodesDir: string,
  cellIo: CellIo | undefined,
  projector: SessionProjector | undefined,
  placement: PlacementGate,
): SessionParts {
  return {
    placement,
    interlocks: interlockWords(cellIo),
    ...(cellIo ? { blocked: sessionInterlocks(cellIo.plc).blocked } : {}),
    ...(projector ? { projector } : {}),
    cost: () => measuredCost(store),
    async openRunner(plan, set, log) {
      try {
        return await RigSessionRunner.open(
          {
            station,
            store,
            episodesDir,
            set,
            rateHz: EPISODE_CONTROL_HZ,
            lookAtTable: false,
            blankCameras: false,
            blind: plan.blind,
            ...(cellIo ? { cellIo } : {}),
            log,
            // The station config's leader takes over in every session rollout (the Session page's E and button).
            ...(station.leader ? { takeover: new SessionTakeover({ spec: leaderSpecOf(station.leader), log }) } : {}),
            withRig: (table, use) => host.forRollout(table, use),
          },
          plan.policies.map((p) => p.spec),
          { cwd },
        ).then(async (runner) => {
          try {
            await preflight({
              station,
              policies: plan.policies.map((p) => ({
                ...runner.policyInfo(p.spec)!,
                ...(plan.blind ? { name: p.label } : {}),
              })),
              blankCameras: false,
            });
          } catch (e) {
            await runner.close();
            throw e;
          }
          return runner;
        });
      } catch (e) {
        if (e instanceof UserError) throw new ApiRefusal(400, e.message);
        throw e;
      }
    },
  };
}
