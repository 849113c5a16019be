import type { FastifyReply } from 'fastify';
import type { ExportDownload } from '../services/lifecycle/exports-service.js';

/** An export's ZIP as both doors answer it: streamed, its size and name given, never cached. */
export function sendExport(reply: FastifyReply, file: ExportDownload): FastifyReply {
  return reply
    .code(200)
    .type(file.contentType)
    .header('content-length', String(file.sizeBytes))
    .header('content-disposition', `attachment; filename="${file.filename}"`)
    .header('cache-control', 'no-store')
    .send(file.stream);
}
