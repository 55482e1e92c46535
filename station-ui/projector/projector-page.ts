/**
 * The projector page (PROJECTOR_PAGE_PATH): a browser full screen (F11) on the projector's display
 * shows the session's layout footprints, and black otherwise. It only listens to the event stream
 * and loads the frame the station rendered (with the token its address's fragment carries). Black is the default whenever it is unsure — before the
 * first frame, while a frame loads, when the station is gone — because a pattern left on the table
 * while the arms move would reach the policy's cameras.
 */
import { EVENTS_PATH, PROJECTOR_FRAME_PATH, type StationEvent } from '../../src/server/api-types.js';
import { eventProtocols, loadApiImage } from '../token.js';

const img = document.getElementById('projected') as HTMLImageElement;
/** The frame the page wants on the table; a load that finishes after a newer frame is ignored. */
let wanted = 0;

function black(): void {
  img.hidden = true;
  if (img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
  img.removeAttribute('src');
}

function showLayout(seq: number): void {
  const next = new Image();
  loadApiImage(next, `${PROJECTOR_FRAME_PATH}?seq=${seq}`).then(
    () => {
      if (wanted !== seq) {
        URL.revokeObjectURL(next.src);
        return; // a blank (or a newer layout) came while this one loaded
      }
      if (img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
      img.src = next.src;
      img.hidden = false;
    },
    () => {}, // black stays
  );
}

function connect(): void {
  const ws = new WebSocket(`ws://${location.host}${EVENTS_PATH}`, eventProtocols());
  ws.onmessage = (m) => {
    const e = JSON.parse(String(m.data)) as StationEvent;
    if (e.type !== 'projector') return;
    const p = e.projector;
    if (p.showing !== 'layout') black();
    else if (p.seq !== wanted) showLayout(p.seq);
    wanted = p.seq;
    // For a look from outside (and the tests): what the page was told, not what has loaded.
    document.body.dataset.showing = p.showing;
    document.body.dataset.seq = String(p.seq);
  };
  ws.onclose = () => {
    black();
    wanted = 0;
    document.body.dataset.showing = 'disconnected';
    setTimeout(connect, 1000);
  };
}

black();
connect();
