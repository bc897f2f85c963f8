import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { textProblem } from '../../input-text.ts';

/** One uploaded file and the text fields of a multipart/form-data body. */
export interface MultipartUpload {
  file: { bytes: Buffer; fileName: string; mimeType: string } | null;
  fields: Record<string, string>;
}

function isClientError(err: unknown): boolean {
  if (err instanceof ApiError) return true;
  const e = err as { code?: unknown; statusCode?: unknown };
  return (
    typeof e?.code === 'string' && e.code.startsWith('FST_') && typeof e.statusCode === 'number' && e.statusCode < 500
  );
}

/** A file name fit for storage and display: no path, no control characters, at most 255 characters. */
function cleanFileName(name: string | undefined, fallback: string): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, 255);
  return clean || fallback;
}

/**
 * Reads a multipart/form-data body: the file part `fileField` (at most `maxFileBytes`, else 413) and the text
 * fields. Malformed bodies (no boundary, truncated parts, …) are a 400, never a 500; other file parts are
 * read and dropped. A text field holding what PostgreSQL cannot store (NUL, unpaired surrogates) is a 400 naming
 * it (JSON bodies get the same check from the app's preValidation hook).
 */
export async function readMultipartUpload(
  request: FastifyRequest,
  options: { fileField: string; maxFileBytes: number; defaultFileName: string },
): Promise<MultipartUpload> {
  if (!request.isMultipart()) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'This route expects a multipart/form-data body');
  }
  const upload: MultipartUpload = { file: null, fields: {} };
  try {
    for await (const part of request.parts({ limits: { fileSize: options.maxFileBytes } })) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.fieldname === options.fileField && upload.file === null) {
          upload.file = {
            bytes,
            fileName: cleanFileName(part.filename, options.defaultFileName),
            mimeType: part.mimetype,
          };
        }
      } else {
        if (part.valueTruncated) {
          throw new ApiError('PAYLOAD_TOO_LARGE', `The field ${part.fieldname} is too long`);
        }
        const problem = typeof part.value === 'string' ? textProblem(part.value) : null;
        if (problem) {
          throw new ApiError('VALIDATION_FAILED', `${part.fieldname} ${problem}`, [
            { field: part.fieldname, message: problem },
          ]);
        }
        if (!(part.fieldname in upload.fields) && typeof part.value === 'string') {
          upload.fields[part.fieldname] = part.value;
        }
      }
    }
  } catch (err) {
    if (isClientError(err)) throw err;
    throw new ApiError('VALIDATION_FAILED', `Malformed multipart body: ${(err as Error)?.message ?? String(err)}`, [
      { field: '(body)', message: 'is not a well-formed multipart/form-data body' },
    ]);
  }
  return upload;
}
