import { escapeXmlText } from '../../xml/escape.ts';
import { child, childElements, descendantText, findDescendant, outerXml, text } from '../../xml/read.ts';
import { signXml } from '../../xml/sign.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import { soapEnvelope, soapParts } from '../kit/soap.ts';
import { checkDpsRequirements } from '../national/dps-builder.ts';
import { buildNationalDps, nationalCancellationMessage, requireAccessKey } from '../national/family.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import { buildNfseWrapper } from './nfse-wrapper.ts';
import { messagesOf, readStringAnswer, refusal } from './string-soap.ts';

/**
 * SIL Tecnologia / TBW (registry provider `SilTecnologia`, briefs/providers-own.md §4): SOAP 1.1 document/literal in
 * `http://webservices.sil.com/`, SOAPAction "", operations `NotaFiscalNacionalGerar`, `…Consultar` and `…Cancelar`,
 * each taking one unqualified `<xml>` string (sent as CDATA) and answering a `<return>` string holding
 * `<Retorno><Status>PROCESSADO_COM_SUCESSO|ERRO</Status><MensagemErro/>…</Retorno>`. Synchronous.
 *
 * Conservative readings of the brief's unknowns (the sandbox accepts only these):
 * - payload: the `NFSe` wrapper (./nfse-wrapper.ts) around the unsigned national DPS, signed on `infNFSe` with
 *   **exclusive C14N** (inclusive is refused: "Falha na validação da assinatura"), validated against NFSe_v1.01.xsd;
 * - identifiers (unknown 6): real, XSD-valid provisional values: `infNFSe/@Id` = `NFS` + a key made by the national
 *   rule from the DPS (ambGer 1, nNFSe = nDPS, check digit right), nNFSe/nDFSe = nDPS; SIL assigns the real ones;
 * - auth: the XML signature only (`signature`: no client certificate in the TLS handshake, no user/password); the
 *   signer's CNPJ root must be the provider's;
 * - NBS: SIL/TBW refuses a DPS without `cNBS`, so `servico.nbs` is required up front (spec 4.8);
 * - answers: `Retorno` with `protocolo`, `nNFSe`, `chaveAcesso` and the issued `NFSe`; errors as
 *   `listaMensagens/mensagem{codigo, descricao, correcao}` with the national rule codes (E0014 "DPS already
 *   processed", E0840 "already cancelled"); consultation answers are escaped twice (read as many times as needed);
 * - consultation (`NotaFiscalNacionalConsultar`): `<ConsultaNFSe><consulente><CNPJ/></consulente>` and `idDPS` or
 *   `chaveAcesso`, signed on the whole document (`URI=""`, exclusive C14N, RSA-SHA256); success without an `NFSe`
 *   means none; a cancelled note's answer carries its cancellation `evento`;
 * - cancellation (`NotaFiscalNacionalCancelar`): the national `pedRegEvento` e101101 signed on `infPedReg` (exclusive
 *   C14N); the answer carries the `evento`.
 */
export const SIL_NAMESPACE = 'http://webservices.sil.com/';
export const SIL_APP_VERSION = 'nfse-service-1.0';
const SUCCESS = 'PROCESSADO_COM_SUCESSO';

const url = (context: SendContext) => context.endpoints.url('emit', context.ambiente, context.municipality);

function call(operation: string, xml: string, context: SendContext): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: SIL_NAMESPACE,
    operation,
    parts: soapParts.cdataString('xml', xml),
    soapAction: '',
  });
  return { method: 'POST', url: url(context), headers, body };
}

/** The consultation message, signed on the whole document (`URI=""`). */
function consultation(key: { idDPS: string } | { chaveAcesso: string }, context: SendContext): string {
  const which =
    'idDPS' in key
      ? `<idDPS>${escapeXmlText(key.idDPS)}</idDPS>`
      : `<chaveAcesso>${escapeXmlText(key.chaveAcesso)}</chaveAcesso>`;
  const xml = `<ConsultaNFSe><consulente><CNPJ>${context.certificate.cnpj ?? ''}</CNPJ></consulente>${which}</ConsultaNFSe>`;
  return signXml(xml, {
    key: { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem },
    algorithm: 'rsa-sha256',
    canonicalization: 'exclusive',
  });
}

/** The `Retorno` of an answer: success, or the outcome of a refusal / an unreadable answer. */
function retornoOf(
  answer: Parameters<typeof readStringAnswer>[0],
  write: boolean,
): { ok: true; root: Element } | { ok: false; outcome: Outcome<never> } {
  const read = readStringAnswer(answer, write);
  if (read.kind === 'failure') return { ok: false, outcome: read.outcome };
  const status = text(read.root, 'Status');
  if (status === SUCCESS) return { ok: true, root: read.root };
  if (status === 'ERRO') {
    const message = text(read.root, 'MensagemErro') ?? 'Erro não detalhado pelo provedor';
    return { ok: false, outcome: refusal(messagesOf(read.root), { Codigo: 'SIL', Descricao: message }) };
  }
  const reason = `Retorno with an unexpected Status ${status ?? '(none)'}`;
  return { ok: false, outcome: write ? { kind: 'unknown', reason } : { kind: 'transient', reason } };
}

function issuedOf(root: Element, ambiente: 1 | 2): IssuedDocument | null {
  const nfse = findDescendant(root, 'NFSe');
  if (!nfse) return null;
  const inf = child(nfse, 'infNFSe');
  const chave = text(root, 'chaveAcesso') ?? /^NFS(\d{50})$/.exec(inf?.getAttribute('Id') ?? '')?.[1] ?? null;
  const numero = text(root, 'nNFSe') ?? text(inf, 'nNFSe');
  if (!chave || !numero) return null;
  const dhProc = text(inf, 'dhProc');
  return {
    chave,
    numero,
    protocol: text(root, 'protocolo'),
    emittedAt: dhProc ? new Date(dhProc) : new Date(),
    xml: outerXml(nfse),
    ambiente,
  };
}

/** The cancellation `evento` (e101101) of an answer, or null. */
function cancellationOf(root: Element): CancellationRecord | null {
  const eventos = [findDescendant(root, 'evento'), ...childElements(root)].filter(
    (e): e is Element => !!e && e.localName === 'evento',
  );
  const evento = eventos.find((e) => findDescendant(e, 'e101101'));
  if (!evento) return null;
  const at = new Date(descendantText(evento, 'dhProc') ?? '');
  return { xml: outerXml(evento), cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at };
}

export const silTecnologiaFamily = defineFamily({
  id: 'dps-provider',
  provider: 'SilTecnologia',
  layout: 'NFSe wrapper of DPS 1.01 (SIL/TBW, SOAP string <xml>)',
  transport: 'soap11',
  auth: 'signature',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: (project, invoice) => [
    ...checkDpsRequirements(project, invoice),
    ...(invoice.servico.nbs
      ? []
      : [{ field: 'servico.nbs', message: 'required by SIL/TBW (the NBS code, 9 digits, or the project default)' }]),
  ],
  declaration: {
    build: (input) => buildNfseWrapper(buildNationalDps(input, SIL_APP_VERSION), input.project, 'provisional'),
    signedElement: 'infNFSe',
    signature: { canonicalization: 'exclusive' },
    schema: 'NFSe',
    schemaErrorCode: 'NFSE_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => call('NotaFiscalNacionalGerar', document.xml, context),
      parse(answer, _document, context): Outcome<IssuedDocument> {
        const retorno = retornoOf(answer, true);
        if (!retorno.ok) return retorno.outcome;
        const issued = issuedOf(retorno.root, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'Retorno without the NFS-e' };
      },
    },
    query: {
      request: (document, context) =>
        call('NotaFiscalNacionalConsultar', consultation({ idDPS: document.id }, context), context),
      parse(answer, _document, context): Outcome<IssuedDocument | null> {
        const retorno = retornoOf(answer, false);
        if (!retorno.ok) return retorno.outcome;
        if (!findDescendant(retorno.root, 'NFSe')) return { kind: 'ok', value: null };
        const issued = issuedOf(retorno.root, context.ambiente);
        return issued ? { kind: 'ok', value: issued } : { kind: 'transient', reason: 'NFS-e without key or number' };
      },
    },
    cancel: {
      message: nationalCancellationMessage(SIL_APP_VERSION, { canonicalization: 'exclusive' }, 'a SIL/TBW'),
      operation: {
        request: ({ signed }, context) => call('NotaFiscalNacionalCancelar', signed, context),
        parse(answer): Outcome<CancellationRecord> {
          const retorno = retornoOf(answer, true);
          if (!retorno.ok) return retorno.outcome;
          const record = cancellationOf(retorno.root);
          return record ? { kind: 'ok', value: record } : { kind: 'unknown', reason: 'Retorno without the evento' };
        },
      },
    },
    queryCancellation: {
      request: (issued, context) =>
        call(
          'NotaFiscalNacionalConsultar',
          consultation({ chaveAcesso: requireAccessKey(issued.chave, 'a SIL/TBW') }, context),
          context,
        ),
      parse(answer): Outcome<CancellationRecord | null> {
        const retorno = retornoOf(answer, false);
        if (!retorno.ok) return retorno.outcome;
        return { kind: 'ok', value: cancellationOf(retorno.root) };
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
