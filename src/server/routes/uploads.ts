/** POST /api/uploads/KIND?name=F: a layout set, sim calibration or policy file as the body, size-limited, validated, stored. */
import type { UploadKind } from '../api-types.js';
import { ApiRefusal } from '../request-checks.js';
import { readUpload, storeUpload, uploadName, UPLOAD_KINDS } from '../uploads.js';
import type { StationContext } from './context.js';
import { route, type Route } from './route-table.js';

export function uploadRoutes(s: StationContext): Route[] {
  return [
    route({
      method: 'POST',
      path: /^\/api\/uploads\/([^/]+)$/,
      names: ([kind]) => {
        if (!UPLOAD_KINDS.includes(kind as UploadKind))
          throw new ApiRefusal(
            404,
            `The station takes uploads of ${UPLOAD_KINDS.join(', ')}, not '${kind.slice(0, 40)}'.`,
          );
      },
      params: ([kind]) => kind as UploadKind,
      howToUse: 'POST the file as the body',
      handle: async ({ url, req, params: kind }) => {
        const name = uploadName(url.searchParams.get('name'), kind);
        const body = await readUpload(req, kind);
        const result = await storeUpload(s.store, s.dataDir, kind, name, body);
        return { status: result.inserted ? 201 : 200, body: result };
      },
    }),
  ];
}
