/**
 * Uploads: a layout set, a sim calibration or a policy (ONNX model) from this computer into the
 * station. A file over its limit is refused here in the station's own sentence before it is sent;
 * the station then checks it with the CLI's validators and answers in one sentence.
 */
import { tooBigSentence, UPLOAD_LIMITS, mib, type UploadKind, type UploadResult } from '../../src/server/api-types.js';
import { api } from '../api.js';
import { h } from '../dom.js';

export interface UploadsHooks {
  report(message: string, error?: boolean): void;
  /** Something new is in the store: lists and forms reload. */
  uploaded(r: UploadResult): void;
}

const ROWS: readonly { kind: UploadKind; label: string; accept: string }[] = [
  { kind: 'layout-set', label: 'Layout set (JSON)', accept: '.json,application/json' },
  { kind: 'sim-calibration', label: 'Sim calibration (JSON)', accept: '.json,application/json' },
  { kind: 'policy', label: 'Policy (ONNX)', accept: '.onnx' },
];

export function uploadsPanel(hooks: UploadsHooks): HTMLElement {
  const result = h('div', { class: 'reason', id: 'upload-result', role: 'status' });
  const rows = ROWS.map(({ kind, label, accept }) => {
    const input = h('input', { type: 'file', id: `upload-${kind}`, accept });
    const btn = h('button', { class: 'btn', type: 'button', id: `upload-${kind}-send` }, 'Upload');
    btn.onclick = () => {
      const file = input.files?.[0];
      if (!file) {
        hooks.report(`Choose a ${label.toLowerCase()} file first.`, true);
        return;
      }
      const show = (text: string, bad: boolean): void => {
        result.textContent = text;
        result.classList.toggle('bad', bad);
        hooks.report(text, bad);
      };
      if (file.size > UPLOAD_LIMITS[kind].bytes) {
        show(tooBigSentence(kind, file.size), true);
        return;
      }
      btn.disabled = true;
      show(`Uploading ${file.name}…`, false);
      api.upload(kind, file.name, file).then(
        (r) => {
          btn.disabled = false;
          show(
            `${r.inserted ? 'Stored' : 'Already in the store'}: ${r.summary} (${r.sha256.slice(0, 12)})${r.spec ? ` — run it as ${r.spec}` : ''}.`,
            false,
          );
          hooks.uploaded(r);
        },
        (e: Error) => {
          btn.disabled = false;
          show(e.message, true);
        },
      );
    };
    return h(
      'div',
      { class: 'upload-row' },
      h(
        'label',
        { for: `upload-${kind}` },
        label,
        h('span', { class: 'muted' }, ` ≤ ${mib(UPLOAD_LIMITS[kind].bytes)}`),
      ),
      input,
      btn,
    );
  });
  return h('div', { class: 'panel', id: 'uploads' }, h('h2', {}, 'Upload to the station'), ...rows, result);
}
