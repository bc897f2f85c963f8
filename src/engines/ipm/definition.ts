import { transportFailure } from '../kit/engine.ts';
import { defineFamily } from '../kit/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import {
  el,
  emissionXml,
  field,
  issuedOf,
  readRetorno,
  rejected,
  situacaoTributaria,
  tomOf,
  XML_DECLARATION,
} from './layout.ts';
import { multipart } from './transport.ts';

/**
 * IPM / Atende.Net own layout, ACBr IPM 1.01 and the legacy 1.00 (briefs/providers-own.md §2; IPM "Manual Integrador
 * NFS-e – Eletron V2" [IPM-MAN]; ACBr `IPM.Provider.pas` / `IPM.GravarXml.pas` / `ACBrNFSeXWebserviceBase.pas`
 * `Multi1`). The 28 IPM cities on ABRASF 2.04 stay on the abrasf-v2 family; this is the family `ipm`, engine key
 * `ipm:ipm`, for every IPM own-layout city of the registry (124 on 1.01, 8 on 1.00).
 *
 *   POST <city URL> multipart/form-data, one XML file part; the credentials as Basic (1.01) or as the form fields
 *   login/senha/cidade with the file as f1 and `?eletron=1` / `?formato_saida=2` (1.00): ./transport.ts
 *     emission      <nfse><identificador/><rps/><nf/><prestador/><tomador/><itens/></nfse>  → <retorno> with the note
 *     consultation  <consulta_rps><cidade/><serie_rps/><numero_rps/></consulta_rps>         → <retorno> (IPM-MAN §5.1)
 *                   <nfse><pesquisa><codigo_autenticidade/></pesquisa></nfse>               → <retorno> (situação)
 *     cancellation  <nfse><nf><numero/><situacao>C</situacao><observacao/></nf><prestador/></nfse>
 *   answers: <retorno><mensagem><codigo>NNNNN - texto</codigo></mensagem><numero_nfse/>…</retorno>; 00001 success
 *
 * Conservative readings of what the brief leaves open (the sandbox, src/sandbox/ipm/, accepts only these):
 * - one file part named `arquivo` (filename `<identificador>.xml`, `text/xml`): the exact field rule is unknown (§2.7 #2);
 * - the XML declares ISO-8859-1 (the samples) and is pure ASCII: every non-ASCII character is a character reference;
 * - unsigned: ACBr's default for 1.01 (`Assinar` is a per-city parameter the registry does not carry); a city that
 *   requires `<nfse id="nota">` signed will refuse, and is reported, not guessed;
 * - `<identificador>` = `<CNPJ>-<série>-<número>` (≤ 80): a resend returns the note already issued (§2.3), so a
 *   resend after a lost answer is `ok` with the same number; reconciliation asks `consulta_rps` by the RPS the
 *   message carries, and an answer that says the RPS is unknown ("não encontrad…") is "none"; any other refusal of
 *   a query is retried, never believed;
 * - municipality codes are TOM codes from the shipped table (src/engines/ipm/tom-codes.ts: every IPM city of the
 *   registry, from kelvins/municipios-brasileiros `siafi_id`, cross-checked with IPM's 2020 list): a project whose
 *   city has no TOM code there is refused at the edge naming `project.codigoMunicipio`; a taker outside the table
 *   goes with `endereco_informado` N and no address;
 * - only taxable (TI / TIRF) and immune notes; exportation and "não incidência" have no documented
 *   `situacao_tributaria` in the manual (14 NTRIB comes only from the unseen NT) and are refused at the edge;
 *   foreign takers are refused too (their `identificador`/`pais` fields are not specified enough);
 * - PIS/COFINS are declared 0,00 and the reform groups (`IBSCBS`, `pis_cofins`) are not sent: their definition is in
 *   the unseen NT 35/2021 (§2.7 #1);
 * - the PDF is the provider's (spec 4.4): GET /invoices/{id}/pdf downloads ACBr's `ProLinkURL` (the registry's
 *   `links`, `http://sync.nfs-e.net/datacenter/include/nfw/nfw_imp_notas.php?codauten=<código>`), without the
 *   Basic credentials, and answers it 200 inline when the link gives a PDF; anything else is a 502 PORTAL_ERROR;
 * - "already cancelled" is the sandbox's code 00226 "NFS-e já cancelada" (the manual's code list was not readable
 *   here); the cancellation query (`pesquisa` by authenticity code, situação 2) decides before it is believed.
 */

export const IPM_ALREADY_CANCELLED = '00226';
export const IPM_PDF_BASE = 'http://sync.nfs-e.net/datacenter/include/nfw/nfw_imp_notas.php?codauten=';

/** The note's public link: the registry's `…?codauten=%CodVerif%` template, or a base URL (sandbox, override). */
export function pdfUrl(base: string, verificationCode: string): string {
  const code = encodeURIComponent(verificationCode);
  if (base.includes('%CodVerif%')) return base.replace('%CodVerif%', code);
  return `${base}${base.includes('?') ? '&' : '?'}codauten=${code}`;
}

const NOT_FOUND = /n[aã]o\s+(foi\s+)?encontrad|inexistente/i;

export const ipmDefinition = defineFamily({
  id: 'ipm',
  provider: 'IPM',
  // only the cities of the shipped TOM table can be written (routing reports the others as not implemented)
  serves: (municipality) => tomOf(municipality) !== null,
  layout: 'IPM Atende.Net own layout 1.01 (multipart + Basic) and 1.00 (multipart form credentials)',
  transport: 'multipart',
  auth: 'basic',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'portal',
    homologation: true,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    if (!tomOf(project.codigoMunicipio)) {
      unmet.push({
        field: 'project.codigoMunicipio',
        message: 'IPM: no TOM code is known for this municipality (shipped IPM table)',
      });
    }
    if (situacaoTributaria(invoice) === null) {
      unmet.push({
        field: 'valores.tributacaoIss',
        message: 'IPM own layout: only taxable or immune services have a documented situacao_tributaria',
      });
    }
    if (invoice.tomador.estrangeiro) {
      unmet.push({ field: 'tomador', message: 'IPM own layout: foreign takers are not supported by this engine' });
    }
    const local = invoice.servico.localPrestacao;
    if (local.kind === 'pais' || (local.codigoMunicipio !== project.codigoMunicipio && !tomOf(local.codigoMunicipio))) {
      unmet.push({
        field: 'servico.localPrestacao',
        message: 'IPM: the place of service needs a TOM code (shipped IPM table)',
      });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      const identificador = `${input.project.cnpj}-${input.serie}-${input.number}`.slice(0, 80);
      return { id: identificador, xml: emissionXml({ ...input, identificador }) };
    },
    signedElement: null,
    schema: null,
    schemaErrorCode: 'IPM_LAYOUT',
  },
  operations: {
    emit: {
      request: (document, context) => multipart(context, document.xml, `${document.id}.xml`, 'send'),
      parse(answer, _document, context): Outcome<IssuedDocument> {
        const retorno = readRetorno(answer);
        if (retorno.kind === 'failure') return retorno.outcome;
        if (retorno.kind === 'errors') return rejected(retorno.errors);
        const issued = issuedOf(retorno.root, answer.body, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'IPM answer without numero_nfse' };
      },
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const xml =
          `${XML_DECLARATION}<consulta_rps>${el('cidade', field(document.xml, 'cidade'))}` +
          `${el('serie_rps', field(document.xml, 'serie_recibo_provisorio'))}` +
          `${el('numero_rps', field(document.xml, 'nro_recibo_provisorio'))}</consulta_rps>`;
        const answer = await send(multipart(context, xml, `consulta-${document.id}.xml`, 'query'));
        if (answer.kind !== 'response') return transportFailure(answer);
        const retorno = readRetorno(answer);
        if (retorno.kind === 'failure') return retorno.outcome;
        if (retorno.kind === 'errors') {
          return retorno.errors.some((e) => NOT_FOUND.test(e.Descricao))
            ? { kind: 'ok', value: null }
            : rejected(retorno.errors);
        }
        return { kind: 'ok', value: issuedOf(retorno.root, answer.body, context.ambiente) };
      },
    },
    cancel: {
      message: {
        build({ issued, reason }) {
          const xml =
            `${XML_DECLARATION}<nfse><nf>${el('numero', issued.numero)}<situacao>C</situacao>` +
            `${el('observacao', (reason ?? 'Cancelamento solicitado pelo prestador').slice(0, 1000))}</nf>` +
            `<prestador>${el('cpfcnpj', issued.providerCnpj)}${el('cidade', tomOf(issued.codigoMunicipio))}` +
            '</prestador></nfse>';
          return { id: `cancel-${issued.numero}`, xml };
        },
        signedElement: null,
        schema: null,
        schemaErrorCode: 'IPM_LAYOUT',
      },
      operation: {
        request: ({ signed, input }, context) =>
          multipart(context, signed, `cancelamento-${input.issued.numero}.xml`, 'send'),
        parse(answer): Outcome<CancellationRecord> {
          const retorno = readRetorno(answer);
          if (retorno.kind === 'failure') return retorno.outcome;
          if (retorno.kind === 'errors') return rejected(retorno.errors);
          const situacao = field(answer.body, 'situacao_codigo_nfse');
          if (situacao !== '2') return { kind: 'unknown', reason: `IPM cancellation answer with situação ${situacao}` };
          return { kind: 'ok', value: { cancelledAt: new Date(), xml: answer.body } };
        },
      },
    },
    pdf: {
      request: (issued, context) => ({
        method: 'GET',
        url: pdfUrl(
          context.endpoints.url('pdf', context.ambiente, context.municipality),
          issued.verificationCode ?? '',
        ),
        headers: { accept: 'application/pdf' },
        binary: true,
        anonymous: true,
      }),
      parse(answer): Outcome<Buffer> {
        const pdf = Buffer.from(answer.body, 'latin1');
        if (answer.status === 200 && pdf.subarray(0, 5).toString('latin1') === '%PDF-')
          return { kind: 'ok', value: pdf };
        if (answer.status >= 500) return { kind: 'transient', reason: `IPM PDF link: HTTP ${answer.status}` };
        const type = String(answer.headers['content-type'] ?? 'no content type');
        return {
          kind: 'rejected',
          errorCode: 'IPM_PDF',
          errorMessage: `the IPM link answered HTTP ${answer.status} (${type}), not a PDF`,
          errors: [],
        };
      },
    },
    queryCancellation: {
      async exchange(issued, context, send): Promise<Outcome<CancellationRecord | null>> {
        if (!issued.verificationCode) return { kind: 'ok', value: null };
        const xml = `${XML_DECLARATION}<nfse><pesquisa>${el('codigo_autenticidade', issued.verificationCode)}</pesquisa></nfse>`;
        const answer = await send(multipart(context, xml, `pesquisa-${issued.numero ?? 'nfse'}.xml`, 'query'));
        if (answer.kind !== 'response') return transportFailure(answer);
        const retorno = readRetorno(answer);
        if (retorno.kind === 'failure') return retorno.outcome;
        if (retorno.kind === 'errors') return rejected(retorno.errors);
        return field(answer.body, 'situacao_codigo_nfse') === '2'
          ? { kind: 'ok', value: { cancelledAt: new Date(), xml: answer.body } }
          : { kind: 'ok', value: null };
      },
    },
  },
  pdfLink: (issued) =>
    issued.verificationCode ? `${IPM_PDF_BASE}${encodeURIComponent(issued.verificationCode)}` : null,
  alreadyProcessedCodes: [],
  alreadyCancelledCodes: [IPM_ALREADY_CANCELLED],
});
