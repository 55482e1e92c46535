/**
 * Whether an ONNX model names external data: tensors whose bytes live in another file, which
 * onnxruntime reads from a path the model chooses (relative to the working directory for a model
 * given as bytes). An uploaded model must carry all its weights inside, or an upload could read
 * the station's own files back as actions.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
const EXTERNAL = onnx.TensorProto.DataLocation.EXTERNAL;

export type OnnxBytesCheck =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly reason: string /** The bytes did not decode as a ModelProto at all. */;
      readonly undecodable?: true;
    };

/**
 * Decodes the model and walks every message in it (graphs, subgraphs in attributes, functions,
 * training graphs, sparse tensors) for a tensor stored outside the file. Iterative, so a deeply
 * nested model cannot overflow the stack.
 */
export function checkNoExternalData(bytes: Uint8Array): OnnxBytesCheck {
  let model: unknown;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    return {
      ok: false,
      undecodable: true,
      reason: `it could not be read as an ONNX model to check it for external data (${(e as Error).message.replace(/\s+/g, ' ').slice(0, 120)})`,
    };
  }
  const stack: unknown[] = [model];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    const m = v as { dataLocation?: unknown; externalData?: unknown; name?: unknown };
    const entries = Array.isArray(m.externalData) ? (m.externalData as { key?: string; value?: string }[]) : [];
    if (m.dataLocation === EXTERNAL || entries.length > 0) {
      const location = entries.find((e) => e.key === 'location')?.value;
      const what = typeof m.name === 'string' && m.name !== '' ? `tensor '${m.name.slice(0, 60)}'` : 'a tensor';
      return {
        ok: false,
        reason: `${what} keeps its data in another file${location ? ` ('${location.slice(0, 80)}')` : ''}; save the model with its weights inside (onnx.save(model, path, save_as_external_data=False))`,
      };
    }
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
  }
  return { ok: true };
}
