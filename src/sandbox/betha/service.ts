import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { validateXml } from '../../xml/xsd.ts';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom, rootElementText, textAt } from '../kit/xml-dom.ts';
import { type SandboxSigner, signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { type MensagemProcessamento, officialMessage } from '../sefin/codes.ts';
import { checkDpsRules, type DpsData, EVERYONE_REGISTERED, inscricaoOf, inscricaoRoot, readDps } from '../sefin/dps.ts';
import { checkEventRules, composeEvento, readPedido } from '../sefin/events.ts';
import { issueNationalNfse } from '../sefin/issue-nfse.ts';
import { createSefinService } from '../sefin/service.ts';
import { type Ambiente, SefinStore } from '../sefin/store.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { NFSE_NS } from '../sefin/xml.ts';

/**
 * The Betha sandbox (briefs/providers-own.md §4, "Betha"): SOAP 1.1 in `http://www.betha.com.br/e-nota-dps`, mutual
 * TLS, asynchronous, answers with the `ns2:` prefix. No Betha WSDL or XSD was found, so the DPS is validated by
 * mapping it back to the national layout (namespace `http://www.sped.fazenda.gov.br/nfse`, `id` → `Id`) and
 * running the OFFICIAL DPS_v1.01.xsd (and pedRegEvento_v1.01.xsd for events) with validateXml; before that, the
 * Betha-specific rules: the DPS in the Betha namespace, `versao="1.01"` (the reading the engine chose), and a
 * lowercase `id` (an uppercase `Id` gets Betha's real refusal "O atributo 'Id' não pode aparecer no elemento
 * 'infDPS'", code E001 like any schema error). The signature is verified with the kit's own verifier on the DPS as
 * sent (Betha namespace); the client certificate's CNPJ root must be the DPS provider's.
 *
 * - RecepcionarDpsEnvio: synchronous refusals (schema E001, signature, certificate, a DPS already received: E0014);
 *   otherwise a protocol with status "Aguardando validação do ambiente nacional". The submission is held for
 *   `holdMs`, then processed with the national rules (not the adhesion rule: Betha's cities are not adherent):
 *   issued as a national-style NFS-e, or "ERRO" with the national codes.
 * - ConsultarStatusDpsEnvio: `ConsultarStatusDpsEmissaoResposta` (EMISSAO) or `ConsultarStatusDpsResposta`
 *   (CANCELAMENTO) with statusProcessamento "Processado com sucesso" | "ERRO" | the waiting status.
 * - RecepcionarEventoCancelamentoEnvio: `evento{infEvento id="EVT…"{…, pedRegEvento}}` with the pedRegEvento
 *   signed on infPedReg; same asynchronous flow (E0840 when the note is already cancelled or being cancelled).
 * - the national read API of what Betha shared (GET /dps/{id}, /nfse/{chave}, /nfse/{chave}/eventos/…: ACBr's
 *   `ServicosPadraoNacional` for Betha cities) is served under the same mount, from the same store, in Sefin's shapes.
 */
export const BETHA_NS = 'http://www.betha.com.br/e-nota-dps';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const WAITING_STATUS = 'Aguardando validação do ambiente nacional';
const APP_VERSION = 'Betha_Sbx_1.0';

export interface BethaSandboxOptions extends MunicipalSandboxDependencies {
  /** how long a submission waits for "the national environment" before it is processed (default 1 s) */
  holdMs?: number;
}

type Mensagem = { codigo: string; mensagem: string; correcao?: string };

interface Submission {
  protocolo: string;
  tipo: 'EMISSAO' | 'CANCELAMENTO';
  env: Ambiente;
  receivedAt: Date;
  prestador: string;
  /** EMISSAO: the DPS in the national layout; CANCELAMENTO: the pedRegEvento in the national layout */
  nationalXml: string;
  idDps: string;
  registeredName: string | null;
  status: 'waiting' | 'done' | 'error';
  mensagens: Mensagem[];
  chaveAcesso?: string;
}

const toMensagem = (m: MensagemProcessamento): Mensagem => ({
  codigo: m.codigo,
  mensagem: m.descricao,
  ...(m.complemento ? { correcao: m.complemento } : {}),
});

const toNational = (xml: string) =>
  xml
    .replaceAll(`xmlns="${BETHA_NS}"`, `xmlns="${NFSE_NS}"`)
    .replace(/<(infDPS|infPedReg|infEvento) id="/g, '<$1 Id="');

function soap(status: number, inner: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP_NS}"><soap:Body>${inner}</soap:Body></soap:Envelope>`,
  };
}

function fault(status: number, code: string, text: string): SandboxReply {
  return soap(
    status,
    `<soap:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></soap:Fault>`,
  );
}

const el = (name: string, value: string | null | undefined) =>
  value === null || value === undefined ? '' : `<ns2:${name}>${escapeXml(value)}</ns2:${name}>`;

function lista(mensagens: Mensagem[]): string {
  return `<ns2:listaMensagens>${mensagens
    .map(
      (m) =>
        `<ns2:mensagem>${el('codigo', m.codigo)}${el('mensagem', m.mensagem)}${el('correcao', m.correcao)}</ns2:mensagem>`,
    )
    .join('')}</ns2:listaMensagens>`;
}

function answer(name: string, content: string): SandboxReply {
  return soap(200, `<ns2:${name} xmlns:ns2="${BETHA_NS}">${content}</ns2:${name}>`);
}

/** The raw text of the first `<name …>…</name>` element (any prefix) of a SOAP body, byte for byte. */
function rawElement(body: string, name: string): string | null {
  const open = new RegExp(`<(\\w+:)?${name}[\\s>]`).exec(body);
  if (!open) return null;
  const closeTag = `</${open[1] ?? ''}${name}>`;
  const end = body.lastIndexOf(closeTag);
  return end < open.index ? null : body.slice(open.index, end + closeTag.length);
}

export function createBethaService(options: BethaSandboxOptions): SandboxService {
  const { now, logger, signer } = options;
  const holdMs = options.holdMs ?? 1_000;
  const store = new SefinStore(
    options.dataDir ? join(options.dataDir, 'dps-provider-betha', 'store.jsonl') : null,
    (m) => logger.warn(m),
  );
  const national = createSefinService({
    signer,
    store,
    now,
    logger,
    defaultIssRate: 2,
    registry: EVERYONE_REGISTERED,
    requireNationalAdherence: false,
  });
  const submissions = new Map<string, Submission>();
  const byDps = new Map<string, Submission>();

  const clientCnpj = (req: SandboxRequest): string | null => {
    if (!req.clientCertificate) return null;
    try {
      const identity = readIcpBrasilIdentity(req.clientCertificate.raw);
      return identity.cnpj ?? identity.cpf;
    } catch {
      return null;
    }
  };

  function newProtocol(): string {
    let p: string;
    do p = `${Date.now()}${randomInt(100_000, 999_999)}`;
    while (submissions.has(p));
    return p;
  }

  function recepcionarDps(req: SandboxRequest, body: string): SandboxReply {
    const at = now();
    const refuse = (mensagens: Mensagem[]) =>
      answer(
        'RecepcionarDpsResposta',
        `${el('dhRecebimento', brasiliaDateTime(at))}${el('status', 'ERRO')}${lista(mensagens)}`,
      );
    const raw = rawElement(body, 'DPS');
    if (!raw) return refuse([{ codigo: 'E001', mensagem: "O elemento 'DPS' é obrigatório em 'RecepcionarDpsEnvio'." }]);
    const doc = parseDom(raw);
    const root = doc.documentElement;
    const inf = root ? childElements(root).find((e) => e.localName === 'infDPS') : undefined;
    if (!root || root.namespaceURI !== BETHA_NS || root.localName !== 'DPS' || !inf) {
      return refuse([{ codigo: 'E001', mensagem: `O elemento 'DPS' deve estar no namespace ${BETHA_NS}.` }]);
    }
    if (inf.hasAttribute('Id')) {
      return refuse([{ codigo: 'E001', mensagem: "O atributo 'Id' não pode aparecer no elemento 'infDPS'" }]);
    }
    if (root.getAttribute('versao') !== '1.01') {
      return refuse([{ codigo: 'E001', mensagem: `Versão do leiaute não aceita: ${root.getAttribute('versao')}.` }]);
    }
    const view = toNational(raw);
    const xsd = validateXml('DPS', view);
    if (!xsd.ok) return refuse(xsd.errors.slice(0, 10).map((e) => ({ codigo: 'E001', mensagem: e })));
    const signature = verifyEnvelopedSignature(raw, root, inf);
    if (!signature.ok)
      return refuse([
        toMensagem(officialMessage(signature.reason === 'missing' ? 'E0717' : 'E0714', signature.detail)),
      ]);
    const dps: DpsData = readDps(parseDom(view).documentElement!);
    const emitente = inscricaoOf(dps.emitter);
    const signerId = signature.value.identity.cnpj ?? signature.value.identity.cpf;
    if (!emitente || !signerId || inscricaoRoot(signerId) !== inscricaoRoot(emitente)) {
      return refuse([toMensagem(officialMessage('E0718', `Certificado: ${signerId}; emitente: ${emitente}.`))]);
    }
    const transmitter = clientCnpj(req);
    const prestador = inscricaoOf(dps.prest);
    if (!transmitter || !prestador || inscricaoRoot(transmitter) !== inscricaoRoot(prestador)) {
      return refuse([
        {
          codigo: 'E1200',
          mensagem: `O certificado de transmissão (${transmitter ?? 'ausente'}) não é do prestador da DPS.`,
        },
      ]);
    }
    const env: Ambiente = dps.tpAmb === '1' ? 1 : 2;
    if (byDps.has(`${env}:${dps.id}`) || store.findByDps(env, dps.id)) {
      return refuse([toMensagem(officialMessage('E0014', `DPS ${dps.id} já recebida.`))]);
    }
    const submission: Submission = {
      protocolo: newProtocol(),
      tipo: 'EMISSAO',
      env,
      receivedAt: at,
      prestador,
      nationalXml: view,
      idDps: dps.id,
      registeredName: signature.value.identity.subjectCN.split(':')[0]?.trim() || null,
      status: 'waiting',
      mensagens: [],
    };
    submissions.set(submission.protocolo, submission);
    byDps.set(`${env}:${dps.id}`, submission);
    logger.info(`sandbox Betha: DPS ${dps.id} received under protocol ${submission.protocolo}`);
    return answer(
      'RecepcionarDpsResposta',
      `${el('protocolo', submission.protocolo)}${el('dhRecebimento', brasiliaDateTime(at))}${el('status', WAITING_STATUS)}${lista([])}`,
    );
  }

  function recepcionarCancelamento(req: SandboxRequest, body: string): SandboxReply {
    const at = now();
    const refuse = (mensagens: Mensagem[]) =>
      answer(
        'RecepcionarEventoCancelamentoResposta',
        `${el('dhRecebimento', brasiliaDateTime(at))}${el('status', 'ERRO')}${lista(mensagens)}`,
      );
    const evento = rawElement(body, 'evento');
    const pedido = evento ? rawElement(evento, 'pedRegEvento') : null;
    if (!evento || !pedido)
      return refuse([{ codigo: 'E001', mensagem: "O elemento 'evento/infEvento/pedRegEvento' é obrigatório." }]);
    const wrapper = parseDom(evento).documentElement;
    const infEvento = wrapper ? childElements(wrapper).find((e) => e.localName === 'infEvento') : undefined;
    if (wrapper?.namespaceURI !== BETHA_NS || !infEvento) {
      return refuse([{ codigo: 'E001', mensagem: `O elemento 'evento' deve estar no namespace ${BETHA_NS}.` }]);
    }
    if (infEvento.hasAttribute('Id') || /<infPedReg Id=/.test(pedido)) {
      return refuse([{ codigo: 'E001', mensagem: "O atributo 'Id' não pode aparecer no elemento 'infPedReg'" }]);
    }
    const standalone = pedido.replace(/^<pedRegEvento/, `<pedRegEvento xmlns="${BETHA_NS}"`);
    const view = toNational(standalone);
    const xsd = validateXml('pedRegEvento', view);
    if (!xsd.ok) return refuse(xsd.errors.slice(0, 10).map((e) => ({ codigo: 'E001', mensagem: e })));
    const sRoot = parseDom(standalone).documentElement!;
    const infPedReg = childElements(sRoot).find((e) => e.localName === 'infPedReg')!;
    const signature = verifyEnvelopedSignature(standalone, sRoot, infPedReg);
    if (!signature.ok)
      return refuse([
        toMensagem(officialMessage(signature.reason === 'missing' ? 'E1989' : 'E1980', signature.detail)),
      ]);
    const ped = readPedido(parseDom(view).documentElement!);
    if (infEvento.getAttribute('id') !== `EVT${ped.chNFSe}${ped.tipoEvento}`) {
      return refuse([{ codigo: 'E001', mensagem: `infEvento id deve ser EVT${ped.chNFSe}${ped.tipoEvento}.` }]);
    }
    const env: Ambiente = ped.tpAmb === '1' ? 1 : 2;
    const record = store.findByKey(env, ped.chNFSe);
    const transmitter = clientCnpj(req);
    const signerCnpj = signature.value.identity.cnpj;
    if (
      !transmitter ||
      !signerCnpj ||
      !ped.cnpjAutor ||
      inscricaoRoot(signerCnpj) !== inscricaoRoot(ped.cnpjAutor) ||
      inscricaoRoot(transmitter) !== inscricaoRoot(ped.cnpjAutor)
    ) {
      return refuse([toMensagem(officialMessage('E0812', `CNPJAutor ${ped.cnpjAutor}; certificado ${signerCnpj}.`))]);
    }
    const rule = checkEventRules(ped, ped.chNFSe, env, at, record, !!store.findByKey(env === 1 ? 2 : 1, ped.chNFSe));
    if (rule) return refuse([toMensagem(rule)]);
    const inFlight = [...submissions.values()].some(
      (s) => s.tipo === 'CANCELAMENTO' && s.idDps === ped.chNFSe && s.status !== 'error',
    );
    if (!record || inFlight) return refuse([toMensagem(officialMessage('E0840', `NFS-e ${ped.chNFSe}.`))]);
    const submission: Submission = {
      protocolo: newProtocol(),
      tipo: 'CANCELAMENTO',
      env,
      receivedAt: at,
      prestador: ped.cnpjAutor,
      nationalXml: view,
      idDps: ped.chNFSe,
      registeredName: null,
      status: 'waiting',
      mensagens: [],
    };
    submissions.set(submission.protocolo, submission);
    return answer(
      'RecepcionarEventoCancelamentoResposta',
      `${el('protocolo', submission.protocolo)}${el('dhRecebimento', brasiliaDateTime(at))}${el('status', WAITING_STATUS)}${lista([])}`,
    );
  }

  /** Processes every submission whose hold has passed (what "the national environment" answers). */
  function settle(): void {
    const at = now();
    for (const s of submissions.values()) {
      if (s.status !== 'waiting' || at.getTime() - s.receivedAt.getTime() < holdMs) continue;
      try {
        if (s.tipo === 'EMISSAO') processDps(s, at);
        else processCancellation(s, at);
      } catch (err) {
        s.status = 'error';
        s.mensagens = [{ codigo: 'E999', mensagem: (err as Error).message }];
      }
    }
  }

  function processDps(s: Submission, at: Date): void {
    const dps = readDps(parseDom(s.nationalXml).documentElement!);
    const errors = checkDpsRules(dps, s.env, at, store, EVERYONE_REGISTERED, false);
    if (errors.length > 0) {
      s.status = 'error';
      s.mensagens = errors.map(toMensagem);
      return;
    }
    const record = issueNationalNfse({
      env: s.env,
      at,
      dps,
      dpsRaw: rootElementText(s.nationalXml, 'DPS'),
      registeredName: s.registeredName,
      store,
      signer: signer as SandboxSigner,
      verAplic: APP_VERSION,
      defaultIssRate: 2,
    });
    s.status = 'done';
    s.chaveAcesso = record.chaveAcesso;
    logger.info(`sandbox Betha: NFS-e ${record.chaveAcesso} issued for protocol ${s.protocolo}`);
  }

  function processCancellation(s: Submission, at: Date): void {
    const ped = readPedido(parseDom(s.nationalXml).documentElement!);
    const record = store.findByKey(s.env, ped.chNFSe);
    if (!record || record.cancelled) {
      s.status = 'error';
      s.mensagens = [toMensagem(officialMessage('E0840', `NFS-e ${ped.chNFSe}.`))];
      return;
    }
    const nDFSe = store.nextDfseNumber(s.env);
    const dhProc = brasiliaDateTime(at);
    const unsigned = composeEvento({
      chaveAcesso: record.chaveAcesso,
      tipoEvento: ped.tipoEvento,
      nSeqEvento: 1,
      dhProc,
      nDFSe,
      verAplic: APP_VERSION,
      pedidoRaw: rootElementText(s.nationalXml, 'pedRegEvento'),
    });
    const eventoXml = signEnveloped(unsigned, { rootName: 'evento', elementName: 'infEvento' }, signer);
    store.addEvent(s.env, record.chaveAcesso, {
      tipoEvento: ped.tipoEvento,
      nSeqEvento: 1,
      dhProc,
      nDFSe: String(nDFSe),
      eventoXml,
    });
    s.status = 'done';
    s.chaveAcesso = record.chaveAcesso;
  }

  function consultarStatus(req: SandboxRequest, body: string): SandboxReply {
    settle();
    const envio = rawElement(body, 'ConsultarStatusDpsEnvio') ?? '';
    const root = parseDom(envio).documentElement;
    const field = (name: string) => textAt(root, name)?.trim() ?? '';
    const tipo = field('tipoIntegracao');
    const name = tipo === 'EMISSAO' ? 'ConsultarStatusDpsEmissaoResposta' : 'ConsultarStatusDpsResposta';
    const s = submissions.get(field('protocolo'));
    const transmitter = clientCnpj(req);
    const missing = ['tpAmb', 'codigoIbge', 'cpfCnpjPrestador', 'protocolo', 'tipoIntegracao'].filter((f) => !field(f));
    const problem: Mensagem | null =
      missing.length > 0
        ? { codigo: 'E001', mensagem: `Campos obrigatórios ausentes: ${missing.join(', ')}.` }
        : !transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(field('cpfCnpjPrestador'))
          ? { codigo: 'E1200', mensagem: 'O certificado de transmissão não é do prestador consultado.' }
          : !s || s.tipo !== tipo || inscricaoRoot(s.prestador) !== inscricaoRoot(field('cpfCnpjPrestador'))
            ? { codigo: 'E002', mensagem: `Protocolo ${field('protocolo')} não encontrado para ${tipo}.` }
            : null;
    if (problem || !s)
      return answer(
        name,
        `${el('protocolo', field('protocolo'))}${el('statusProcessamento', 'ERRO')}${lista(problem ? [problem] : [])}`,
      );
    const status = s.status === 'done' ? 'Processado com sucesso' : s.status === 'error' ? 'ERRO' : WAITING_STATUS;
    const record = s.chaveAcesso ? store.findByKey(s.env, s.chaveAcesso) : undefined;
    const emissao =
      s.tipo === 'EMISSAO' && record
        ? `<ns2:emissao>${el('idDps', record.idDps)}${el('chaveAcesso', record.chaveAcesso)}${el('numeroDps', record.nDPS)}${el('serieDps', record.serie)}${el('numeroNotaFiscal', record.nNFSe)}${el('linkPdf', `https://www.nfse.gov.br/consultapublica?chave=${record.chaveAcesso}`)}</ns2:emissao>`
        : '';
    return answer(
      name,
      `${el('protocolo', s.protocolo)}${el('idDps', s.tipo === 'EMISSAO' ? s.idDps : null)}${el('statusProcessamento', status)}${el('dataHoraRecebimento', brasiliaDateTime(s.receivedAt))}${emissao}${lista(s.mensagens)}`,
    );
  }

  function soapPost(req: SandboxRequest): SandboxReply {
    const body = req.body.toString('utf8');
    const operation =
      /<soap(?:env)?:Body[^>]*>\s*<(?:\w+:)?(\w+)/.exec(body)?.[1] ??
      /<(?:\w+:)?Body[^>]*>\s*<(?:\w+:)?(\w+)/.exec(body)?.[1];
    switch (operation) {
      case 'RecepcionarDpsEnvio':
        return recepcionarDps(req, body);
      case 'ConsultarStatusDpsEnvio':
        return consultarStatus(req, body);
      case 'RecepcionarEventoCancelamentoEnvio':
        return recepcionarCancelamento(req, body);
      default:
        return fault(500, 'soap:Client', `Operação desconhecida: ${operation ?? '(corpo SOAP ilegível)'}`);
    }
  }

  const nationalReads = national.routes
    .filter((r) => r.method === 'GET' || (Array.isArray(r.method) && r.method.includes('GET')))
    .map((r) => ({
      ...r,
      handler: (req: SandboxRequest) => {
        settle();
        return r.handler(req);
      },
    }));

  return {
    family: 'dps-provider-betha',
    name: 'Betha',
    mount: '/municipal/betha/:ambiente(producao|producaorestrita)',
    routes: [{ name: 'betha.soap', method: 'POST', path: '/', handler: soapPost }, ...nationalReads],
    before: (req) =>
      req.clientCertificate ? null : fault(403, 'soap:Client', 'Certificado digital do cliente ausente.'),
    notFound: (req) => fault(404, 'soap:Client', `${req.method} ${req.subPath} não existe.`),
    errorReply: (_req, err) => fault(500, 'soap:Server', err.message),
    faults: { errorReply: () => fault(500, 'soap:Server', 'Falha simulada pelo sandbox.') },
  };
}

/** The Betha sandbox as mounted by the sandbox server (`/municipal/betha/<producao|producaorestrita>`). */
export const bethaSandbox: MunicipalSandbox = {
  engine: 'dps-provider:betha',
  slug: 'betha',
  create: (deps) => createBethaService(deps),
};
