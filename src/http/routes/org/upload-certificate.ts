import { Type } from 'typebox';
import { readPkcs12 } from '../../../certificates/pkcs12.ts';
import { sealSecret } from '../../../certificates/vault.ts';
import { replaceActiveCertificate } from '../../../db/repositories/certificates.ts';
import { cnpjRoot } from '../../../domain/tax-ids.ts';
import { requireOrg } from '../../auth.ts';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { documented, documentedBody, errorResponses, IdParams } from '../../schemas.ts';
import { iso, loadOrgProject } from './common.ts';
import { readMultipartUpload } from './multipart.ts';

export const MAX_CERTIFICATE_BYTES = 50 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * POST /org/projects/{id}/certificate: the project's A1 certificate (PKCS#12, legacy encryptions included).
 * The file and its password are sealed with AES-256-GCM under the master key and never returned; the
 * previous certificate is replaced atomically.
 */
export const uploadCertificateRoute: RouteModule = (app, ctx) => {
  app.post(
    '/org/projects/:id/certificate',
    {
      onRequest: requireOrg(ctx, 'certificates:write'),
      // the multipart body is read by the handler; the body schema below only documents it
      attachValidation: true,
      schema: {
        tags: ['organization'],
        summary: 'Upload the A1 certificate of a project',
        description:
          "Needs the scope certificates:write. multipart/form-data with `file` (.pfx/.p12, at most 50 KB, else 413) and `password`. 400 codes: CERTIFICATE_MISSING_FILE, CERTIFICATE_MISSING_PASSWORD, CERTIFICATE_NOT_PKCS12, CERTIFICATE_WRONG_PASSWORD, CERTIFICATE_NO_PRIVATE_KEY, CERTIFICATE_EXPIRED, CERTIFICATE_NOT_YET_VALID, CERTIFICATE_CNPJ_MISMATCH (the certificate's CNPJ root, its first 8 digits, must equal the project's: branches share the head office's certificate). Atomically replaces the previous certificate.",
        consumes: ['multipart/form-data'],
        params: IdParams,
        body: documentedBody(
          Type.Object({
            file: Type.String({ format: 'binary', description: 'PKCS#12 file (.pfx or .p12), at most 50 KB' }),
            password: Type.String({ description: 'The certificate password' }),
          }),
          {
            name: 'UploadCertificateRequest',
            description: 'The A1 certificate file and its password',
            example: { file: '(the bytes of horizonte-ecnpj-a1.pfx)', password: 'S3nh@DoCertificado' },
          },
        ),
        response: {
          201: documented(
            Type.Object(
              {
                id: Type.String(),
                fileName: Type.String(),
                subjectCN: Type.String(),
                validFrom: Type.String({ format: 'date-time' }),
                validUntil: Type.String({ format: 'date-time' }),
                daysUntilExpiration: Type.Integer(),
                active: Type.Boolean(),
              },
              { description: 'An A1 certificate (spec 2.4)' },
            ),
            {
              name: 'Certificate',
              description: 'The stored certificate (spec 2.4); it replaces the previous one',
              example: {
                id: 'cf7c8bd9-4f1b-46e9-9702-01594aa854a1',
                fileName: 'horizonte-ecnpj-a1.pfx',
                subjectCN: 'HORIZONTE TECNOLOGIA DA INFORMACAO LTDA:11222333000181',
                validFrom: '2026-03-10T14:22:05.000Z',
                validUntil: '2027-03-10T14:22:05.000Z',
                daysUntilExpiration: 103,
                active: true,
              },
            },
          ),
          ...errorResponses(400, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const project = await loadOrgProject(ctx, request);
      const upload = await readMultipartUpload(request, {
        fileField: 'file',
        maxFileBytes: MAX_CERTIFICATE_BYTES,
        defaultFileName: 'certificate.pfx',
      });
      if (!upload.file || upload.file.bytes.length === 0) {
        throw new ApiError('CERTIFICATE_MISSING_FILE', 'The multipart field `file` with the .pfx/.p12 is required', [
          { field: 'file', message: 'is required' },
        ]);
      }
      const password = upload.fields.password;
      if (password === undefined) {
        throw new ApiError('CERTIFICATE_MISSING_PASSWORD', 'The multipart field `password` is required', [
          { field: 'password', message: 'is required' },
        ]);
      }
      const now = ctx.now();
      const read = readPkcs12(upload.file.bytes, password, now);
      if (!read.ok) {
        const field = read.error.code === 'CERTIFICATE_WRONG_PASSWORD' ? 'password' : 'file';
        throw new ApiError(read.error.code, read.error.message, [{ field, message: read.error.message }]);
      }
      const cert = read.value;
      if (!cert.cnpj || cnpjRoot(cert.cnpj) !== cnpjRoot(project.cnpj)) {
        const message = cert.cnpj
          ? `The certificate belongs to CNPJ ${cert.cnpj}, whose root ${cnpjRoot(cert.cnpj)} differs from the project's ${cnpjRoot(project.cnpj)}`
          : 'The certificate carries no CNPJ (an e-CNPJ is required)';
        throw new ApiError('CERTIFICATE_CNPJ_MISMATCH', message, [{ field: 'file', message }]);
      }
      const row = await replaceActiveCertificate(ctx.db, {
        projectId: project.id,
        fileName: upload.file.fileName,
        subjectCn: cert.subjectCN.replace(/\u0000/g, ''),
        cnpj: cert.cnpj,
        validFrom: cert.validFrom,
        validUntil: cert.validUntil,
        fingerprint: cert.fingerprintSha256,
        pfxSealed: sealSecret(upload.file.bytes, ctx.config.masterKey).toString('base64'),
        passwordSealed: sealSecret(Buffer.from(password, 'utf8'), ctx.config.masterKey).toString('base64'),
      });
      return reply.status(201).send({
        id: row.id,
        fileName: row.fileName,
        subjectCN: row.subjectCn,
        validFrom: iso(row.validFrom)!,
        validUntil: iso(row.validUntil)!,
        daysUntilExpiration: Math.floor((row.validUntil.getTime() - now.getTime()) / DAY_MS),
        active: row.active,
      });
    },
  );
};
