import { createHash, randomInt } from 'node:crypto';
import { join } from 'node:path';
import { splitNamespaces } from '../../xml/split-namespaces.ts';
import { validateXml } from '../../xml/xsd.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import { child, childElements, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandboxDependencies } from '../municipal.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { type ParsedCall, parseCall, soapAnswer, soapFault } from './envelope.ts';
import { nationalKeyIn } from './national-nfse.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import {
  checkRpsSignature,
  composeNfse,
  cpfCnpjOf,
  digitsOf,
  hasSignature,
  listaMensagens,
  type Mensagem,
  official,
  type RpsData,
  readRps,
  rootOf,
  serialize,
  verificationCode,
  verifyRps,
  verifySigned,
} from './rules.ts';
import { type Ambiente, AbrasfStore, type IssuedNfse } from './store.ts';

/**
 * The generic ABRASF 2.0x sandbox, driven by a provider profile (profiles.ts): it accepts the provider's SOAP idiom
 * and the encodings real clients send, validates every message against the provider's XSD (E160), checks the
 * credentials (body or WS-Security username/password, a URL token, the TLS client certificate and, for unsigned
 * providers on mutual TLS, its holder: E179 / E182 / E157), verifies the signatures the
 * provider requires with the kit's verifier (E174/E324 RPS, E172/E325 lote, E180/E172 cancellation; E171 when the
 * signer is not the prestador), and answers in the ABRASF shapes:
 * - GerarNfse / RecepcionarLoteRpsSincrono: the NFS-e (CompNfse: Numero, CodigoVerificacao, the signed declaration,
 *   signed by the sandbox) or the messages (E10 for an RPS already received);
 * - RecepcionarLoteRps: NumeroLote, DataRecebimento, Protocolo; the lote is processed once `holdMs` has passed;
 *   ConsultarLoteRps answers Situacao 2 with E178 until then, then 4 with the NFS-e or 3 with the lote's messages
 *   (E2: competência after the RPS date; E10), and Situacao 1 with E86 for an unknown protocol;
 * - ConsultarNfsePorRps (E92 while its lote waits, E4 unknown), ConsultarNfsePorFaixa (E212 none; at most
 *   `limits.queryPage`), CancelarNfse (E78 unknown, E79 already cancelled, E213 codes 3 and 5).
 * SubstituirNfse and the Prestado/Tomado queries answer a SOAP Client fault (not simulated yet).
 */
export interface AbrasfSandboxOptions extends MunicipalSandboxDependencies {
  /** how long an asynchronous lote waits before it is processed (default 1 s) */
  holdMs?: number;
}

interface Lote {
  protocolo: string;
  env: Ambiente;
  numeroLote: string;
  prestador: string;
  receivedAt: Date;
  status: 'waiting' | 'done' | 'error';
  rps: RpsData[];
  razaoSocial: string;
  issued: IssuedNfse[];
  mensagens: Mensagem[];
}

export function createAbrasfService(profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions): SandboxService {
  const { now, logger, signer } = options;
  const holdMs = options.holdMs ?? profile.holdMs ?? 1_000;
  const store = new AbrasfStore(options.dataDir ? join(options.dataDir, profile.family, 'store.jsonl') : null, (m) =>
    logger.warn(m),
  );
  const lotes = new Map<string, Lote>();
  const byDocument = profile.signature.reference === 'document';
  const ns = profile.dataNamespace ? ` xmlns="${profile.dataNamespace}"` : '';
  const split = profile.namespaces;
  const message = (root: string, inner: string) =>
    split?.messages[root]
      ? splitNamespaces(
          `<${root}>${inner}</${root}>`,
          split.messages[root],
          split.types,
          split.localGroups,
          split.typeRefs,
        )
      : `<${root}${ns}>${inner}</${root}>`;
  const compNfse = (n: IssuedNfse) =>
    `<CompNfse${ns}>${n.nfseXml}${n.cancelamento ? n.cancelamento.xml : ''}</CompNfse>`;

  /** the note's ChaveAcesso (32 hex digits, derived from what the store keeps) */
  const chaveOf = (prestador: string, numero: string, codigo: string) =>
    createHash('md5').update(`${profile.slug}:${prestador}:${numero}:${codigo}`).digest('hex');
  const byNumeroLote = profile.pollBy === 'NumeroLote';

  function waitingLoteOf(env: Ambiente, prestador: string, ident: RpsData['ident']): Lote | undefined {
    return [...lotes.values()].find(
      (l) =>
        l.env === env &&
        l.status === 'waiting' &&
        l.prestador === prestador &&
        l.rps.some(
          (r) => r.ident.numero === ident.numero && r.ident.serie === ident.serie && r.ident.tipo === ident.tipo,
        ),
    );
  }

  /** DataRecebimento: a date in the providers whose XSD says tsData (EloTech), else a date-time */
  const receivedOn = (at: Date) => (profile.nfse?.dateOnly ? brasiliaDateTime(at).slice(0, 10) : brasiliaDateTime(at));

  /** The checks every emission runs on its RPS at receipt: signatures, signer, duplicates. */
  function checkRpsAtReceipt(env: Ambiente, xml: string, rpsList: RpsData[]): Mensagem[] {
    const out: Mensagem[] = [];
    for (const rps of rpsList) {
      const signature = checkRpsSignature(xml, rps, profile.signature.rps, byDocument);
      if (signature) out.push(signature);
      else if (
        store.findByRps(env, rps.prestador, rps.ident.numero, rps.ident.serie, rps.ident.tipo) ||
        waitingLoteOf(env, rps.prestador, rps.ident)
      ) {
        out.push(
          official('E10', `RPS ${rps.ident.numero} série ${rps.ident.serie} tipo ${rps.ident.tipo}.`, rps.ident),
        );
      }
    }
    return out;
  }

  function issue(env: Ambiente, rps: RpsData, razaoSocial: string): IssuedNfse {
    const numero = store.nextNumber(env, rps.prestador);
    const codigoVerificacao = verificationCode();
    const dataEmissao = brasiliaDateTime(now());
    const nfseXml = (profile.composeNfse ?? composeNfse)({
      ...(profile.nfse ? { signed: profile.nfse.signed } : {}),
      ...(profile.nfse?.chaveAcesso ? { chaveAcesso: chaveOf(rps.prestador, numero, codigoVerificacao) } : {}),
      dataEmissao: profile.nfse?.dateOnly ? dataEmissao.slice(0, 10) : dataEmissao,
      dataNamespace: profile.dataNamespace,
      version: profile.version,
      numero,
      codigoVerificacao,
      rps,
      razaoSocial,
      signer,
    });
    const nfse: IssuedNfse = {
      env,
      numero,
      codigoVerificacao,
      prestador: rps.prestador,
      rpsNumero: rps.ident.numero,
      rpsSerie: rps.ident.serie,
      rpsTipo: rps.ident.tipo,
      dataEmissao,
      nfseXml,
    };
    store.add(nfse);
    logger.info(`sandbox ${profile.provider}: NFS-e ${numero} issued for RPS ${rps.ident.numero}/${rps.ident.serie}`);
    return nfse;
  }

  /** Processing rules of a lote (asynchronous): a competência after the RPS date (E2), an RPS issued meanwhile. */
  function processingErrors(env: Ambiente, rpsList: RpsData[]): Mensagem[] {
    return rpsList.flatMap((r) =>
      r.competencia > r.dataEmissao
        ? [official('E2', `Competência ${r.competencia}, emissão ${r.dataEmissao}.`, r.ident)]
        : profile.aliquota === 'fraction' && Number(r.aliquota ?? 0) >= 1
          ? [official('E165', `Alíquota ${r.aliquota}: informe a fração (3,07 % = 0.0307).`, r.ident)]
          : store.findByRps(env, r.prestador, r.ident.numero, r.ident.serie, r.ident.tipo)
            ? [official('E10', undefined, r.ident)]
            : [],
    );
  }

  function settle(): void {
    const at = now().getTime();
    for (const lote of lotes.values()) {
      if (lote.status !== 'waiting' || at - lote.receivedAt.getTime() < holdMs) continue;
      const errors = processingErrors(lote.env, lote.rps);
      if (errors.length > 0) {
        lote.status = 'error';
        lote.mensagens = errors;
        continue;
      }
      lote.issued = lote.rps.map((r) => issue(lote.env, r, lote.razaoSocial));
      lote.status = 'done';
    }
  }

  /** An emission (GerarNfse, RecepcionarLoteRps[Sincrono]): receipt checks, then issued now or held as a lote. */
  function emission(env: Ambiente, call: ParsedCall, xml: string, root: Element): string {
    const answerRoot = {
      GerarNfse: 'GerarNfseResposta',
      RecepcionarLoteRps: 'EnviarLoteRpsResposta',
      RecepcionarLoteRpsSincrono: profile.syncBatch?.responseRoot ?? 'EnviarLoteRpsSincronoResposta',
    }[call.operation]!;
    const refuse = (mensagens: Mensagem[]) => message(answerRoot, listaMensagens(mensagens));
    const lote = call.operation === 'GerarNfse' ? null : child(root, 'LoteRps');
    const rpsElements = lote ? childElements(child(lote, 'ListaRps')!) : [child(root, 'Rps')!];
    if (lote) {
      if (
        rpsElements.length > profile.limits.rpsPerLote ||
        Number(textAt(lote, 'QuantidadeRps')) !== rpsElements.length
      ) {
        return refuse([official('E214', `QuantidadeRps ${textAt(lote, 'QuantidadeRps')}; RPS ${rpsElements.length}.`)]);
      }
      if (profile.signature.lote) {
        if (!hasSignature(root)) return refuse([official('E172', 'Lote não assinado.')]);
        const check = verifySigned(xml, lote, byDocument);
        if (!check.ok) return refuse([official('E325', check.detail)]);
        const signer = check.value.identity.cnpj ?? check.value.identity.cpf ?? '';
        if (rootOf(signer) !== rootOf(cpfCnpjOf(child(lote, 'Prestador') ?? lote)))
          return refuse([official('E157', `Lote assinado por ${signer}.`)]);
      }
    }
    const rpsList = rpsElements.map(readRps);
    const problems = checkRpsAtReceipt(env, xml, rpsList);
    if (problems.length > 0) return refuse(problems);
    const razaoSocial = razaoSocialOf(xml, rpsList[0]!);
    if (call.operation === 'RecepcionarLoteRps') {
      const received: Lote = {
        protocolo: `${Date.now()}${randomInt(100_000, 999_999)}`,
        env,
        numeroLote: textAt(lote, 'NumeroLote') ?? '',
        prestador: cpfCnpjOf(child(lote, 'Prestador') ?? lote),
        receivedAt: now(),
        status: 'waiting',
        rps: rpsList,
        razaoSocial,
        issued: [],
        mensagens: [],
      };
      lotes.set(received.protocolo, received);
      return message(
        answerRoot,
        `<NumeroLote>${received.numeroLote}</NumeroLote><DataRecebimento>${receivedOn(received.receivedAt)}</DataRecebimento>${byNumeroLote ? '' : `<Protocolo>${received.protocolo}</Protocolo>`}`,
      );
    }
    const errors = call.operation === 'RecepcionarLoteRpsSincrono' ? processingErrors(env, rpsList) : [];
    if (errors.length > 0) return message(answerRoot, listaMensagens(errors, true));
    const issued = rpsList.map((r) => issue(env, r, razaoSocial));
    const head =
      call.operation === 'RecepcionarLoteRpsSincrono'
        ? `<NumeroLote>${textAt(lote, 'NumeroLote')}</NumeroLote><DataRecebimento>${receivedOn(now())}</DataRecebimento>${byNumeroLote ? '' : `<Protocolo>${Date.now()}${randomInt(100_000, 999_999)}</Protocolo>`}`
        : '';
    return message(answerRoot, `${head}<ListaNfse>${issued.map(compNfse).join('')}</ListaNfse>`);
  }

  /** The signer's name (its certificate CN before `:`), as the provider's taxpayer register would hold it. */
  function razaoSocialOf(xml: string, rps: RpsData): string {
    const check = verifyRps(xml, rps, byDocument);
    return check.ok ? (check.value.identity.subjectCN.split(':')[0]?.trim() ?? '') : '';
  }

  function consultarLote(env: Ambiente, root: Element): string {
    settle();
    const protocolo = textAt(root, byNumeroLote ? 'NumeroLote' : 'Protocolo')?.trim() ?? '';
    const requester = cpfCnpjOf(requesterOf(root));
    const lote = byNumeroLote
      ? [...lotes.values()]
          .reverse()
          .find((l) => l.numeroLote === protocolo && rootOf(l.prestador) === rootOf(requester))
      : lotes.get(protocolo);
    const reply = (situacao: string, inner: string) =>
      message('ConsultarLoteRpsResposta', `<Situacao>${situacao}</Situacao>${inner}`);
    if (!lote || lote.env !== env || rootOf(lote.prestador) !== rootOf(requester)) {
      return reply('1', listaMensagens([official(byNumeroLote ? 'E87' : 'E86', `Lote ${protocolo}.`)]));
    }
    if (lote.status === 'waiting') return reply('2', listaMensagens([official('E178')]));
    if (lote.status === 'error') return reply('3', listaMensagens(lote.mensagens, true));
    return reply(
      '4',
      `<ListaNfse>${lote.issued.map((n) => compNfse(store.find(env, n.prestador, n.numero) ?? n)).join('')}</ListaNfse>`,
    );
  }

  function consultarPorRps(env: Ambiente, root: Element): string {
    settle();
    const ident = child(root, 'IdentificacaoRps');
    const prestador = cpfCnpjOf(requesterOf(root));
    const numero = String(Number(textAt(ident, 'Numero') ?? '0'));
    const serie = (textAt(ident, 'Serie') ?? '').trim();
    const tipo = textAt(ident, 'Tipo') ?? '1';
    const found = store.findByRps(env, prestador, numero, serie, tipo);
    if (found) return message('ConsultarNfseRpsResposta', compNfse(found));
    const pending = waitingLoteOf(env, prestador, { numero, serie, tipo });
    return message('ConsultarNfseRpsResposta', listaMensagens([official(pending ? 'E92' : 'E4')]));
  }

  function consultarFaixa(env: Ambiente, root: Element): string {
    const prestador = cpfCnpjOf(requesterOf(root));
    const from = Number(textAt(root, 'Faixa/NumeroNfseInicial') ?? '0');
    const final = textAt(root, 'Faixa/NumeroNfseFinal');
    if (profile.rangeNeedsEnd && !final) {
      return message(
        'ConsultarNfseFaixaResposta',
        listaMensagens([official('E160', 'NumeroNfseFinal é obrigatório.')]),
      );
    }
    const found = store.range(env, prestador, from, final ? Number(final) : from + profile.limits.queryPage - 1);
    if (found.length === 0) return message('ConsultarNfseFaixaResposta', listaMensagens([official('E212')]));
    const page = found.slice(0, profile.limits.queryPage);
    return message('ConsultarNfseFaixaResposta', `<ListaNfse>${page.map(compNfse).join('')}</ListaNfse>`);
  }

  function cancelar(env: Ambiente, xml: string, root: Element): string {
    const refuse = (m: Mensagem) => message('CancelarNfseResposta', listaMensagens([m]));
    const pedido = child(root, 'Pedido')!;
    const inf = child(pedido, 'InfPedidoCancelamento')!;
    if (profile.signature.cancel || (profile.signature.cancelWhenPresent && hasSignature(pedido))) {
      if (!hasSignature(pedido)) return refuse(official('E180'));
      const check = verifySigned(xml, inf, byDocument);
      if (!check.ok) return refuse(official('E172', check.detail));
      const signer = check.value.identity.cnpj ?? check.value.identity.cpf ?? '';
      if (rootOf(signer) !== rootOf(cpfCnpjOf(child(inf, 'IdentificacaoNfse')))) {
        return refuse(official('E157', `Pedido assinado por ${signer}.`));
      }
    }
    const codigo = textAt(inf, 'CodigoCancelamento') ?? '';
    if (codigo === '3' || codigo === '5') return refuse(official('E213'));
    const prestador = cpfCnpjOf(child(inf, 'IdentificacaoNfse'));
    const numero = textAt(inf, 'IdentificacaoNfse/Numero') ?? '';
    const nfse = store.find(env, prestador, numero);
    if (!nfse) return refuse(official('E78', `NFS-e ${numero}.`));
    if (nfse.cancelamento) return refuse(official('E79', `Cancelada em ${nfse.cancelamento.dataHora}.`));
    const adn = textAt(inf, 'ADNChave');
    if (adn && adn !== nationalKeyIn(nfse.nfseXml))
      return refuse(official('E78', `ADNChave ${adn} não é a da NFS-e ${numero}.`));
    const chave = textAt(inf, 'ChaveAcesso');
    if (profile.nfse?.chaveAcesso && chave?.toLowerCase() !== chaveOf(prestador, numero, nfse.codigoVerificacao)) {
      return refuse(official('E78', `ChaveAcesso ${chave ?? '(ausente)'} não corresponde à NFS-e ${numero}.`));
    }
    const dataHora = brasiliaDateTime(now());
    const shape = profile.cancelAnswer ?? { ret: 'RetCancelamento', confirmacao: 'Confirmacao' };
    const idAttr = profile.cancelAnswer ? '' : ` Id="CONF${prestador}N${numero}"`;
    const cancelamento =
      `<NfseCancelamento versao="${profile.version}"><${shape.confirmacao}${idAttr}>` +
      `<Pedido>${childElements(pedido).map(serialize).join('')}</Pedido><DataHora>${dataHora}</DataHora></${shape.confirmacao}></NfseCancelamento>`;
    store.cancel(env, prestador, numero, dataHora, cancelamento);
    return message('CancelarNfseResposta', `<${shape.ret}>${cancelamento}</${shape.ret}>`);
  }

  /** who asks: the Prestador of a query, else the IdentificacaoRequerente (EloTech) */
  const requesterOf = (root: Element) => child(root, 'Prestador') ?? child(root, 'IdentificacaoRequerente');

  function credentialProblem(env: Ambiente, call: ParsedCall, root: Element): Mensagem | null {
    if (profile.requerente) {
      const requerente = child(root, 'IdentificacaoRequerente');
      const homologa = textAt(requerente, 'Homologa') === 'true' || textAt(requerente, 'Homologa') === '1';
      if (homologa !== (env === 2)) {
        return official(
          'E179',
          `Homologa ${textAt(requerente, 'Homologa')} em ambiente de ${env === 2 ? 'homologação' : 'produção'}.`,
        );
      }
      const known = profile.knownCredentials?.[cpfCnpjOf(requerente)];
      if (known && known.password !== textAt(requerente, 'Senha')) return official('E179', 'Senha inválida.');
      return null;
    }
    if (!profile.bodyCredentials) return null;
    if (!call.username || !call.password) return official('E179', 'Informe username e password.');
    const cnpj = digitsOf(root.getElementsByTagNameNS('*', 'Cnpj')[0]?.textContent);
    const known = profile.knownCredentials?.[cnpj];
    if (known && (known.username !== call.username || known.password !== call.password)) {
      return official('E179', 'Usuário ou senha inválidos.');
    }
    return null;
  }

  /** an unsigned provider on mutual TLS (Fisco): the certificate's holder is the message's (first) CpfCnpj */
  function holderProblem(req: SandboxRequest, root: Element): Mensagem | null {
    if (!profile.certificateHolder || !req.clientCertificate) return null;
    const identity = readIcpBrasilIdentity(req.clientCertificate.raw);
    const holder = identity.cnpj ?? identity.cpf ?? '';
    const asker = cpfCnpjOf(root.getElementsByTagNameNS('*', 'CpfCnpj')[0]?.parentNode as Element | null);
    return holder && rootOf(holder) === rootOf(asker)
      ? null
      : official('E157', `Certificado de ${holder || 'titular desconhecido'}; prestador ${asker}.`);
  }

  /** the URL's credential (Tributus `tokenAuth`): present, and the known one of the message's CNPJ */
  function urlTokenProblem(req: SandboxRequest, root: Element): Mensagem | null {
    if (!profile.urlToken) return null;
    const token = req.query.get(profile.urlToken)?.trim();
    if (!token) return official('E179', `Informe ${profile.urlToken}.`);
    const known = profile.knownCredentials?.[digitsOf(root.getElementsByTagNameNS('*', 'Cnpj')[0]?.textContent)];
    return known && known.password !== token ? official('E179', `${profile.urlToken} inválido.`) : null;
  }

  const RESPONSE_ROOTS: Record<string, string> = {
    GerarNfse: 'GerarNfseResposta',
    RecepcionarLoteRps: 'EnviarLoteRpsResposta',
    RecepcionarLoteRpsSincrono: 'EnviarLoteRpsSincronoResposta',
    ConsultarLoteRps: 'ConsultarLoteRpsResposta',
    ConsultarNfsePorRps: 'ConsultarNfseRpsResposta',
    ConsultarNfsePorFaixa: 'ConsultarNfseFaixaResposta',
    CancelarNfse: 'CancelarNfseResposta',
  };

  /** A signed query (ISSNet, DSF): the Signature last in the message root, by the requester (E172 / E157). */
  function querySignatureProblem(xml: string, root: Element, queried: Element): Mensagem | null {
    if (!hasSignature(root)) return official('E172', 'Consulta não assinada.');
    // queries are signed at their root: `URI=""` is always accepted there (ISSNet, GISS), `#Id` when it has one
    const check = verifySigned(xml, queried === root ? childElements(root)[0]! : queried, true);
    if (!check.ok) return official('E172', check.detail);
    const signer = check.value.identity.cnpj ?? check.value.identity.cpf ?? '';
    const requester = cpfCnpjOf(child(queried, 'Prestador'));
    return rootOf(signer) === rootOf(requester) ? null : official('E157', `Consulta assinada por ${signer}.`);
  }

  function soapPost(req: SandboxRequest): SandboxReply {
    const env: Ambiente = req.params.ambiente === 'producao' ? 1 : 2;
    const call = parseCall(profile, req.body.toString('utf8'));
    if ('error' in call) return soapFault(500, 'Client', call.error);
    const served =
      profile.operations.includes(call.operation) ||
      Object.values(profile.operationNames ?? {}).includes(call.operation);
    const sync = call.operation === 'RecepcionarLoteRpsSincrono' ? profile.syncBatch : undefined;
    const answerRoot = served ? (sync?.responseRoot ?? RESPONSE_ROOTS[call.operation]) : undefined;
    if (!answerRoot)
      return soapFault(500, 'Client', `Operação ${call.operation} não simulada pelo sandbox.`, call.soapVersion);
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (profile.soapActionPrefix && call.soapVersion === '1.1' && action !== profile.soapActionPrefix + call.operation)
      return soapFault(500, 'Client', `ActionNotSupported: ${action || '(sem SOAPAction)'}`, call.soapVersion);
    const byEnvironment = profile.soapActionByEnvironment;
    if (byEnvironment) {
      const named =
        Object.entries(profile.operationNames ?? {}).find(([, official]) => official === call.operation)?.[0] ??
        call.operation;
      const prefix = env === 1 ? byEnvironment.production : byEnvironment.homologation;
      if (action !== prefix + named)
        return soapFault(500, 'Client', `SOAPAction inválida: ${action || '(sem SOAPAction)'}`, call.soapVersion);
    }
    const answer = (inner: string) => soapAnswer(profile, call, inner);
    const refuse = (mensagens: Mensagem[]) => answer(message(answerRoot, listaMensagens(mensagens)));
    if (profile.clientCertificate && !req.clientCertificate) return refuse([official('E182')]);
    if (call.cabecalho) {
      const versao = /<versaoDados>([^<]+)<\/versaoDados>/.exec(call.cabecalho)?.[1];
      if (!versao || !/^\d\.\d\d$/.test(versao)) return refuse([official('E183')]);
      // split namespaces (GISS): the header is a message of its own schema (its namespace, versao, versaoDados)
      if (split && !validateXml(profile.schema, call.cabecalho).ok) return refuse([official('E183')]);
    }
    // an unqualified message (Fisco) is read in the ABRASF namespace, as its XSD validates it
    const qualify = (message: string) =>
      /^(?:<\?xml[^>]*\?>)?\s*<\w+(?=[\s>/])(?![^>]*\sxmlns=)/.test(message.trim())
        ? message.trim().replace(/^((?:<\?xml[^>]*\?>)?\s*<\w+)/, `$1 xmlns="${profile.dataNamespace}"`)
        : message;
    const xml =
      call.message && profile.unqualifiedMessages && profile.dataNamespace ? qualify(call.message) : call.message;
    if (!xml) return refuse([official('E160', 'Mensagem ausente.')]);
    const messageRoot = /^(?:<\?xml[^>]*\?>)?\s*<(?:\w+:)?(\w+)/.exec(xml.trim())?.[1];
    if (sync && messageRoot !== sync.requestRoot)
      return soapFault(500, 'Client', `Método não disponível: ${call.operation} espera ${sync.requestRoot}.`);
    // a provider with a layout per city: the XSD of the cabecalho's versaoDados
    const versaoDados = /<versaoDados>([^<]+)<\/versaoDados>/.exec(call.cabecalho ?? '')?.[1] ?? '';
    const lowerIds = /<(InfDeclaracaoPrestacaoServico|LoteRps|InfPedidoCancelamento) id="/g;
    if (profile.idAttribute === 'id' && /<(InfDeclaracaoPrestacaoServico|LoteRps|InfPedidoCancelamento) Id="/.test(xml))
      return refuse([official('E160', 'Atributo Id inesperado: o identificador é o atributo id.')]);
    const xsdView = profile.idAttribute === 'id' ? xml.replace(lowerIds, '<$1 Id="') : xml;
    const xsd = validateXml(profile.schemas?.[versaoDados] ?? profile.schema, xsdView);
    if (!xsd.ok)
      return refuse([official('E160', xsd.errors[0]), ...xsd.errors.slice(1, 5).map((e) => official('E160', e))]);
    const root = parseDom(xml).documentElement!;
    const credentials = credentialProblem(env, call, root) ?? urlTokenProblem(req, root) ?? holderProblem(req, root);
    if (credentials) return refuse([credentials]);
    const refused = profile.refusedOperations?.[call.operation];
    if (refused) return refuse([refused]);
    const query =
      call.operation === 'ConsultarNfsePorRps' ||
      call.operation === 'ConsultarNfsePorFaixa' ||
      (call.operation === 'ConsultarLoteRps' && profile.signature.pollQuery === true);
    const queried = (query && profile.queryWrapper && child(root, profile.queryWrapper)) || root;
    const unsignedQuery = query && profile.signature.queries ? querySignatureProblem(xml, root, queried) : null;
    if (unsignedQuery) return refuse([unsignedQuery]);
    switch (call.operation) {
      case 'GerarNfse':
      case 'RecepcionarLoteRps':
      case 'RecepcionarLoteRpsSincrono':
        return answer(emission(env, call, xml, root));
      case 'ConsultarLoteRps':
        return answer(consultarLote(env, root));
      case 'ConsultarNfsePorRps':
        return answer(consultarPorRps(env, queried));
      case 'ConsultarNfsePorFaixa':
        return answer(consultarFaixa(env, queried));
      default:
        return answer(cancelar(env, xml, root));
    }
  }

  return {
    family: profile.family,
    name: profile.provider,
    mount: `/municipal/${profile.slug}/:ambiente(producao|producaorestrita)`,
    routes: [{ name: `${profile.slug}.soap`, method: 'POST', path: '/', handler: soapPost }],
    notFound: (req) => soapFault(404, 'Client', `${req.method} ${req.subPath} não existe.`),
    errorReply: (_req, err) => soapFault(500, 'Server', err.message),
    faults: { errorReply: () => soapFault(500, 'Server', 'Falha simulada pelo sandbox.') },
    admin: [
      {
        method: 'GET',
        path: `/__sandbox/${profile.slug}/issued`,
        handler: () => ({ status: 200, body: store.all().map(({ nfseXml: _x, ...n }) => n) }),
      },
    ],
  };
}
