import { Type } from 'typebox';
import { updateOrgProject } from '../../../db/repositories/projects.ts';
import { newDocumentKey } from '../../../storage/types.ts';
import { orgPrincipal, requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { loadOrgProject } from './common.ts';
import { sniffImageFormat } from '../../../documents/image-structure.ts';
import { decodeLogo } from './logo-format.ts';
import { readMultipartUpload } from './multipart.ts';

export const MAX_LOGO_BYTES = 500 * 1024;

/** POST /org/projects/{id}/logo (spec 2.5): PNG, JPEG or WebP, recognised by content; replaces the previous. */
export const uploadLogoRoute: RouteModule = (app, ctx) => {
  app.post(
    '/org/projects/:id/logo',
    {
      onRequest: requireOrg(ctx, 'projects:write'),
      // the multipart body is read by the handler; the body schema below only documents it
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Upload the DANFSe logo of a project',
        description:
          'Needs the scope projects:write. multipart/form-data with `file`: PNG, JPEG or WebP recognised by its content (not its name or declared type), at most 500 KB (else 413), 400x400 px recommended. The file is decoded structurally (PNG chunks and CRCs, JPEG markers, WebP RIFF chunks) and its dimensions read: a truncated file, one with data after the image (a polyglot) or an inconsistent header is refused with 400 LOGO_INVALID_IMAGE. Replaces the previous logo. Used by the retrato_logo and paisagem_logo DANFSe templates.',
        consumes: ['multipart/form-data'],
        params: IdParams,
        body: documentedBody(
          Type.Object({
            file: Type.String({ format: 'binary', description: 'PNG, JPEG or WebP image, at most 500 KB' }),
          }),
          {
            name: 'UploadLogoRequest',
            description: 'The logo image',
            example: { file: '(the bytes of horizonte-logo.png)' },
          },
        ),
        response: {
          201: documented(
            Type.Object(
              {
                ok: Type.Literal(true),
                key: Type.String({ description: 'Storage key of the logo' }),
                width: Type.Integer({ description: 'Width in pixels, read from the image header' }),
                height: Type.Integer({ description: 'Height in pixels, read from the image header' }),
              },
              { description: 'A stored logo' },
            ),
            {
              name: 'LogoUploaded',
              description: 'The stored logo, with the dimensions read from the image',
              example: {
                ok: true,
                key: 'p/a408dbd1-361b-4349-ae99-111df8564c37/5f0c2a9e8d7b4163a1e2c3d4b5a69788/logo.png',
                width: 400,
                height: 400,
              },
            },
          ),
          ...errorResponses(400, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const project = await loadOrgProject(ctx, request);
      const { orgId } = orgPrincipal(request);
      const upload = await readMultipartUpload(request, {
        fileField: 'file',
        maxFileBytes: MAX_LOGO_BYTES,
        defaultFileName: 'logo',
      });
      if (!upload.file || upload.file.bytes.length === 0) {
        throw new ApiError('LOGO_MISSING_FILE', 'The multipart field `file` with the image is required', [
          { field: 'file', message: 'is required' },
        ]);
      }
      if (!sniffImageFormat(upload.file.bytes)) {
        throw new ApiError('LOGO_UNSUPPORTED_FORMAT', 'The logo must be a PNG, JPEG or WebP image', [
          { field: 'file', message: 'is not a PNG, JPEG or WebP image' },
        ]);
      }
      const decoded = decodeLogo(upload.file.bytes);
      if (!decoded.ok) {
        throw new ApiError('LOGO_INVALID_IMAGE', `The logo cannot be used: ${decoded.reason}`, [
          { field: 'file', message: decoded.reason },
        ]);
      }
      const { format } = decoded;
      const key = newDocumentKey(project.id, `logo.${format.ext}`);
      await ctx.storage.put(key, upload.file.bytes, format.mimeType);
      const row = await updateOrgProject(ctx.db, orgId, project.id, { logoKey: key, logoMimeType: format.mimeType });
      if (!row) {
        await ctx.storage.delete(key).catch(() => undefined);
        throw new ApiError('PROJECT_NOT_FOUND', 'Project not found');
      }
      if (project.logoKey && project.logoKey !== key) {
        await ctx.storage
          .delete(project.logoKey)
          .catch((err: unknown) => request.log.warn({ err }, 'old logo not deleted'));
      }
      return reply.status(201).send({ ok: true as const, key, width: decoded.width, height: decoded.height });
    },
  );
};
