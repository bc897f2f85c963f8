import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { validateXml } from '../../xml/xsd.ts';
import { type PeerCertificate, readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply, SandboxRequest, SandboxRoute } from '../kit/server.ts';
import { type SandboxSigner, signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import { rootElementText } from '../kit/xml-dom.ts';
import { type MensagemProcessamento, officialMessage } from '../sefin/codes.ts';
import { checkDpsRules, type DpsData, EVERYONE_REGISTERED, inscricaoOf, inscricaoRoot, readDps } from '../sefin/dps.ts';
import { checkEventRules, composeEvento, readPedido } from '../sefin/events.ts';
import { issueNationalNfse } from '../sefin/issue-nfse.ts';
import { type Ambiente, type IssuedRecord, SefinStore } from '../sefin/store.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { receiveDocument } from '../sefin/xml.ts';

/**
 * What the sandboxes of the raw-XML providers share (ABase, Modernização Pública; briefs/providers-own.md §4): the
 * request body is the signed national XML itself (a DPS, or a pedRegEvento), received with Sefin's reception rules
 * (UTF-8, no DTD, no prefixes, root, official XSD), verified with the kit's own XML-DSig verifier, checked against the
 * client certificate, ruled by Sefin's business rules without the adherence rule (these cities issue here because
 * they are not adherent), issued as a national-style NFS-e into a Sefin-shaped store, and the national view of what
 * they issued (ACBr `ServicosPadraoNacional`: GET /dps/{id}, /nfse/{chave}, /nfse/{chave}/eventos/{tipo}/{seq}).
 */

/** The national view's routes (named `national.*`): Sefin asks for the client certificate only, no HTTP credential. */
export const isNationalView = (req: SandboxRequest) => (req.routeName ?? '').startsWith('national.');

export const SANDBOX_APP_VERSION = 'RawXml_Sbx_1.0.0';

export type Received<T> = { ok: true; value: T } | { ok: false; status: number; errors: MensagemProcessamento[] };

export const ambienteOf = (req: SandboxRequest): Ambiente => (req.params.ambiente === 'producao' ? 1 : 2);

/** The provider's store: `<dataDir>/<family>/store.jsonl`, or in memory. */
export function storeFor(family: string, dataDir: string | null, warn: (m: string) => void): SefinStore {
  return new SefinStore(dataDir ? join(dataDir, family, 'store.jsonl') : null, warn);
}

/** The CNPJ/CPF of the TLS client certificate, or null when none (or unreadable). */
export function certificateInscricao(peer: PeerCertificate | null): string | null {
  if (!peer) return null;
  try {
    const identity = readIcpBrasilIdentity(peer.raw);
    return identity.cnpj ?? identity.cpf;
  } catch {
    return null;
  }
}

/** The body must be XML sent as `application/xml` (the only reading these sandboxes accept). */
export function isXmlContent(req: SandboxRequest): boolean {
  return /^application\/xml\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''));
}

const packed = (xml: string) => gzipSync(Buffer.from(xml, 'utf8')).toString('base64');

/** A raw DPS: reception, schema, signature, certificates and business rules (E0037 does not apply). */
export function receiveDps(
  body: Buffer,
  env: Ambiente,
  peer: PeerCertificate | null,
  store: SefinStore,
  at: Date,
): Received<{ dps: DpsData; xml: string; registeredName: string | null }> {
  const received = receiveDocument(packed(body.toString('utf8')), 'DPS', 'DPS');
  if (!received.ok) return { ok: false, status: 400, errors: [received.error] };
  const dps = readDps(received.value.root);
  const signature = verifyEnvelopedSignature(received.value.xml, received.value.root, dps.infDps);
  if (!signature.ok) {
    const code = signature.reason === 'missing' ? 'E0717' : 'E0714';
    return { ok: false, status: 400, errors: [officialMessage(code, signature.detail)] };
  }
  const signerId = signature.value.identity.cnpj ?? signature.value.identity.cpf;
  const emitente = inscricaoOf(dps.emitter);
  if (!signerId || !emitente || inscricaoRoot(signerId) !== inscricaoRoot(emitente)) {
    const detail = `Certificado da assinatura: ${signerId ?? '(sem CNPJ/CPF)'}; emitente da DPS: ${emitente ?? '(não identificado)'}.`;
    return { ok: false, status: 400, errors: [officialMessage('E0718', detail)] };
  }
  const transmitter = certificateInscricao(peer);
  if (!transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(emitente)) {
    const detail = `Certificado de transmissão: ${transmitter ?? '(ausente)'}; emitente da DPS: ${emitente}.`;
    return { ok: false, status: 403, errors: [officialMessage('E1200', detail)] };
  }
  const errors = checkDpsRules(dps, env, at, store, EVERYONE_REGISTERED, false);
  if (errors.length > 0) return { ok: false, status: 400, errors };
  const registeredName = signature.value.identity.subjectCN.split(':')[0]?.trim() || null;
  return { ok: true, value: { dps, xml: received.value.xml, registeredName } };
}

/** Issues the national-style NFS-e of an accepted DPS (signed by the sandbox, XSD-checked, stored). */
export function issueNfse(
  env: Ambiente,
  at: Date,
  accepted: { dps: DpsData; xml: string; registeredName: string | null },
  store: SefinStore,
  signer: SandboxSigner,
): IssuedRecord {
  return issueNationalNfse({
    env,
    at,
    dps: accepted.dps,
    dpsRaw: rootElementText(accepted.xml, 'DPS'),
    registeredName: accepted.registeredName,
    store,
    signer,
    verAplic: SANDBOX_APP_VERSION,
    defaultIssRate: 2,
  });
}

/** A raw, signed pedRegEvento: reception, schema, signature, author, the national event rules; then the evento. */
export function registerEvent(
  body: Buffer,
  env: Ambiente,
  peer: PeerCertificate | null,
  store: SefinStore,
  at: Date,
  signer: SandboxSigner,
): Received<{ eventoXml: string; record: IssuedRecord }> {
  const received = receiveDocument(packed(body.toString('utf8')), 'pedRegEvento', 'pedRegEvento');
  if (!received.ok) return { ok: false, status: 400, errors: [received.error] };
  const pedido = readPedido(received.value.root);
  const signature = verifyEnvelopedSignature(received.value.xml, received.value.root, pedido.infPedReg);
  if (!signature.ok) {
    const code = signature.reason === 'missing' ? 'E1989' : 'E1980';
    return { ok: false, status: 400, errors: [officialMessage(code, signature.detail)] };
  }
  const signerCnpj = signature.value.identity.cnpj;
  if (pedido.cnpjAutor && (!signerCnpj || inscricaoRoot(signerCnpj) !== inscricaoRoot(pedido.cnpjAutor))) {
    const detail = `CNPJAutor ${pedido.cnpjAutor}; certificado ${signerCnpj ?? '(sem CNPJ)'}.`;
    return { ok: false, status: 400, errors: [officialMessage('E0812', detail)] };
  }
  const transmitter = certificateInscricao(peer);
  const author = pedido.cnpjAutor ?? pedido.cpfAutor;
  if (!transmitter || !author || inscricaoRoot(transmitter) !== inscricaoRoot(author)) {
    return {
      ok: false,
      status: 403,
      errors: [officialMessage('E1200', `Certificado de transmissão: ${transmitter}.`)],
    };
  }
  const record = store.findByKey(env, pedido.chNFSe);
  const otherEnv: Ambiente = env === 1 ? 2 : 1;
  const rule = checkEventRules(pedido, pedido.chNFSe, env, at, record, !!store.findByKey(otherEnv, pedido.chNFSe));
  if (rule) return { ok: false, status: 400, errors: [rule] };
  if (!record) return { ok: false, status: 400, errors: [officialMessage('E1831', `Chave ${pedido.chNFSe}.`)] };
  const nSeqEvento = record.events.filter((e) => e.tipoEvento === pedido.tipoEvento).length + 1;
  const nDFSe = store.nextDfseNumber(env);
  const dhProc = brasiliaDateTime(at);
  const unsigned = composeEvento({
    chaveAcesso: record.chaveAcesso,
    tipoEvento: pedido.tipoEvento,
    nSeqEvento,
    dhProc,
    nDFSe,
    verAplic: SANDBOX_APP_VERSION,
    pedidoRaw: rootElementText(received.value.xml, 'pedRegEvento'),
  });
  const eventoXml = signEnveloped(unsigned, { rootName: 'evento', elementName: 'infEvento' }, signer);
  const check = validateXml('evento', eventoXml);
  if (!check.ok)
    throw new Error(`sandbox generated an evento that fails evento_v1.01.xsd: ${check.errors.join(' | ')}`);
  store.addEvent(env, record.chaveAcesso, {
    tipoEvento: pedido.tipoEvento,
    nSeqEvento,
    dhProc,
    nDFSe: String(nDFSe),
    eventoXml,
  });
  return { ok: true, value: { eventoXml, record: store.findByKey(env, record.chaveAcesso)! } };
}

/** The note's emitter is the caller (CNPJ root of the TLS certificate). */
function isEmitter(peer: PeerCertificate | null, record: IssuedRecord): boolean {
  const own = certificateInscricao(peer);
  return !!own && [record.emitente, record.prestador].some((p) => !!p && inscricaoRoot(p) === inscricaoRoot(own));
}

/**
 * The national view of the notes this provider issued (what Sefin Nacional answers for them, in its JSON shapes):
 * ACBr sends these queries of the provider's cities to the national environment (`ServicosPadraoNacional`).
 */
export function nationalViewRoutes(store: SefinStore): SandboxRoute[] {
  const erro = (status: number, codigo: string, descricao: string): SandboxReply => ({
    status,
    body: { erro: { codigo, descricao } },
  });
  return [
    {
      name: 'national.dps',
      method: 'GET',
      path: '/dps/:id',
      handler: (req) => {
        const record = store.findByDps(ambienteOf(req), req.params.id);
        if (!record) return erro(404, '404', 'Não foi gerada uma NFS-e com o identificador de DPS informado');
        if (!isEmitter(req.clientCertificate, record)) return erro(403, '403', 'Consulta não permitida.');
        return { status: 200, body: { idDps: record.idDps, chaveAcesso: record.chaveAcesso } };
      },
    },
    {
      name: 'national.nfse',
      method: 'GET',
      path: '/nfse/:chave',
      handler: (req) => {
        const record = store.findByKey(ambienteOf(req), req.params.chave);
        if (!record) return erro(404, '404', 'Chave de acesso não encontrada.');
        if (!isEmitter(req.clientCertificate, record)) return erro(403, '403', 'Consulta não permitida.');
        return { status: 200, body: { chaveAcesso: record.chaveAcesso, nfseXmlGZipB64: packed(record.nfseXml) } };
      },
    },
    {
      name: 'national.eventos',
      method: 'GET',
      path: '/nfse/:chave/eventos/:tipo/:seq',
      handler: (req) => {
        const record = store.findByKey(ambienteOf(req), req.params.chave);
        const event = record?.events.find(
          (e) => e.tipoEvento === req.params.tipo && e.nSeqEvento === Number(req.params.seq),
        );
        if (!record || !event) return erro(404, '404', 'Nenhum evento encontrado para a NFS-e');
        if (!isEmitter(req.clientCertificate, record)) return erro(403, '403', 'Consulta não permitida.');
        return { status: 200, body: { eventoXmlGZipB64: packed(event.eventoXml) } };
      },
    },
  ];
}

/** The document text without its XML declaration (to embed it in an answer). */
export function withoutDeclaration(xml: string): string {
  return xml.replace(/^\s*<\?xml[^>]*\?>/, '');
}
