import { Type } from 'typebox';
import { findProjectInvoice, storageBaseUrlOf } from '../../../db/repositories/invoices.ts';
import { documentUrl } from '../../../invoices/views.ts';
import { projectPrincipal, requireProject } from '../../auth.ts';
import { ApiError, notFound } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';
import { errorResponses, IdParams } from '../../schemas.ts';

export const getInvoiceXmlRoute: RouteModule = (app, ctx) => {
  app.get(
    '/invoices/:id/xml',
    {
      onRequest: requireProject(ctx, 'query'),
      schema: {
        tags: ['documents'],
        summary: 'The NFS-e XML (type=emission) or the cancellation event XML (type=cancel)',
        description:
          'When the documents are cached: 302 to the public URL (immutable). Otherwise 200 application/xml with the stored XML.',
        params: IdParams,
        querystring: Type.Object({
          type: Type.Optional(Type.Union([Type.Literal('emission'), Type.Literal('cancel')], { default: 'emission' })),
        }),
        response: {
          200: {
            description: 'The stored NFS-e XML (or cancellation event XML), signed as the government returned it',
            content: {
              'application/xml': {
                schema: { type: 'string', title: 'InvoiceXml', description: 'An XML document' },
                example:
                  '<?xml version="1.0" encoding="UTF-8"?><NFSe versao="1.00" xmlns="http://www.sped.fazenda.gov.br/nfse">' +
                  '<infNFSe Id="NFS41069022211222333000181000000000134326114839201750"><xLocEmi>Curitiba</xLocEmi><xLocPrestacao>Curitiba</xLocPrestacao>' +
                  '<nNFSe>1343</nNFSe><cLocIncid>4106902</cLocIncid><xLocIncid>Curitiba</xLocIncid>' +
                  '<xTribNac>Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas de computação e bancos de dados.</xTribNac>' +
                  '<verAplic>SefinNac_1.4.0</verAplic><ambGer>2</ambGer><tpEmis>1</tpEmis><procEmi>1</procEmi><cStat>100</cStat>' +
                  '<dhProc>2026-11-26T15:42:14-03:00</dhProc><nDFSe>1843290</nDFSe><emit><CNPJ>11222333000181</CNPJ>' +
                  '<xNome>Horizonte Tecnologia da Informação Ltda</xNome></emit><valores><vBC>1850.00</vBC>' +
                  '<pAliqAplic>2.00</pAliqAplic><vISSQN>37.00</vISSQN><vLiq>1850.00</vLiq></valores>' +
                  '<DPS versao="1.00">…</DPS></infNFSe><Signature xmlns="http://www.w3.org/2000/09/xmldsig#">…</Signature></NFSe>',
              },
            },
          },
          302: Type.Null({
            description: 'The documents are stored: redirect (Location) to the public, immutable document URL',
            headers: {
              location: { type: 'string', format: 'uri', description: 'The URL of the document' },
            },
          }),
          ...errorResponses(404, 409),
        },
      },
    },
    async (request, reply) => {
      const principal = projectPrincipal(request);
      const row = await findProjectInvoice(ctx.db, principal.projectId, request.params.id);
      if (!row) throw notFound('invoice');
      const type = request.query.type ?? 'emission';
      if (row.status !== 'issued' && row.status !== 'cancelled') {
        throw new ApiError('INVOICE_NOT_ISSUED', `The invoice is ${row.status}; its XML exists once it is issued`);
      }
      if (type === 'cancel' && row.status !== 'cancelled') {
        throw new ApiError('INVOICE_NOT_CANCELLED', 'type=cancel is only available for cancelled invoices');
      }
      const key = type === 'cancel' ? row.cancelXmlKey : row.xmlKey;
      if (key) {
        const url = documentUrl(ctx, key, await storageBaseUrlOf(ctx.db, principal.orgId));
        if (url) return reply.redirect(url, 302);
      }
      const xml = type === 'cancel' ? row.cancelXml : row.nfseXml;
      if (!xml) throw new ApiError('XML_NOT_AVAILABLE');
      return reply.type('application/xml; charset=utf-8').send(xml);
    },
  );
};
