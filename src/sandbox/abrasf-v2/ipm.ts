import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { soapAnswer, soapFault } from './envelope.ts';
import { ABRASF_DATA_NS, operationsWithout, type AbrasfSandboxProfile } from './profiles.ts';
import { digitsOf, listaMensagens, official } from './rules.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * IPM's ABRASF 2.04 service (atende.net `WNENotaFiscalEletronicaNfe`; ACBr IPM.Provider.pas, TACBrNFSeProviderIPM204;
 * IPM's nfse_rt.xsd): the message root is the operation element in `net.atende` (`<net:GerarNfseEnvio>`) around
 * the message's unqualified children, SOAPAction `net.atende#<root>`; HTTP Basic with the taxpayer's login; nothing
 * signed; `<EnvioTeste>1</EnvioTeste>` first in every emission message sent to homologation.
 * The generic ABRASF service does the rest (XSD, RPS rules, lotes, queries, cancellation): this layer checks what is
 * IPM's own, then hands it the message in its ABRASF namespace (the body as a bare-message provider's).
 * Readings (strict): no or an empty Basic credential, or not the known one of the message's CNPJ, is refused with
 * E179 in the answer message; an emission to homologation without EnvioTeste, or one to production with it, with
 * E160; a message whose children are qualified (not IPM's idiom) with a SOAP Client fault.
 */
export const IPM_ABRASF_PROFILE: AbrasfSandboxProfile = {
  provider: 'IPM',
  engine: 'abrasf-v2:ipm',
  slug: 'abrasf-ipm',
  family: 'abrasf-v2-ipm',
  version: '2.04',
  schema: 'abrasf204Ipm',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'net.atende', operationCase: 'pascal' },
  request: 'bare',
  response: 'bare',
  // ConsultarNfseServicoTomado is not offered (ACBr: not implemented in homologation)
  operations: operationsWithout('ConsultarNfseServicoTomado'),
  signature: { rps: false, lote: false, cancel: false },
  clientCertificate: false,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};

const EMISSIONS = new Set([
  'GerarNfseEnvio',
  'EnviarLoteRpsEnvio',
  'EnviarLoteRpsSincronoEnvio',
  'SubstituirNfseEnvio',
]);
const TESTE = /^\s*<EnvioTeste>\s*1\s*<\/EnvioTeste>/;

function basicCredentials(req: SandboxRequest): { username: string; password: string } | null {
  const match = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  if (at <= 0 || at === decoded.length - 1) return null;
  return { username: decoded.slice(0, at), password: decoded.slice(at + 1) };
}

/** IPM's own checks and the message handed on in its ABRASF namespace, or the reply that refuses it. */
function ipmRequest(profile: AbrasfSandboxProfile, req: SandboxRequest): SandboxRequest | SandboxReply {
  const text = req.body.toString('utf8');
  const first = /<(?:[\w-]+:)?Body\b[^>]*>\s*<([\w-]+):(\w+)\b([^>]*)>/.exec(text);
  if (!first) return soapFault(500, 'Client', 'Esperada a mensagem no namespace net.atende.');
  const [, prefix, root, attributes] = first as unknown as [string, string, string, string];
  if (!new RegExp(`xmlns:${prefix}="net\\.atende"`).test(text))
    return soapFault(500, 'Client', `${prefix}:${root} fora do namespace net.atende.`);
  const close = `</${prefix}:${root}>`;
  const start = first.index + first[0].length;
  const end = text.indexOf(close, start);
  if (end < 0) return soapFault(500, 'Client', `${root} sem fechamento.`);
  let inner = text.slice(start, end);
  if (/<\w[^>]*\sxmlns="/.test(inner.replace(/<Signature\s[^>]*>/g, '')))
    return soapFault(500, 'Client', 'Os elementos da mensagem vão sem namespace (net.atende).');
  const answer = (codigo: string, correcao: string): SandboxReply =>
    soapAnswer(
      profile,
      { operation: root, soapVersion: '1.1', root, message: null, cabecalho: null, username: null, password: null },
      `<${root.replace(/Envio$/, 'Resposta')} xmlns="${ABRASF_DATA_NS}">${listaMensagens([official(codigo, correcao)])}</${root.replace(/Envio$/, 'Resposta')}>`,
    );
  const login = basicCredentials(req);
  if (!login) return answer('E179', 'Informe usuário e senha (HTTP Basic).');
  const known = profile.knownCredentials?.[digitsOf(/<Cnpj>([^<]*)<\/Cnpj>/.exec(inner)?.[1])];
  if (known && (known.username !== login.username || known.password !== login.password))
    return answer('E179', 'Usuário ou senha inválidos.');
  if (EMISSIONS.has(root)) {
    const teste = TESTE.test(inner);
    const homologation = req.params.ambiente !== 'producao';
    if (homologation && !teste) return answer('E160', 'Em homologação a mensagem começa com EnvioTeste 1.');
    if (!homologation && teste) return answer('E160', 'EnvioTeste em produção.');
    inner = inner.replace(TESTE, '');
  }
  const message = `<${root} xmlns="${ABRASF_DATA_NS}"${attributes.replace(/\s+xmlns:[\w-]+="[^"]*"/g, '')}>${inner}</${root}>`;
  const rootStart = first.index + first[0].lastIndexOf('<');
  const body = Buffer.from(text.slice(0, rootStart) + message + text.slice(end + close.length), 'utf8');
  return { ...req, body, json: () => null };
}

/** The generic ABRASF service behind IPM's idiom. */
export function createIpmAbrasfService(profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions): SandboxService {
  const service = createAbrasfService(profile, options);
  return {
    ...service,
    routes: service.routes.map((route) => ({
      ...route,
      handler: (req: SandboxRequest) => {
        const handed = ipmRequest(profile, req);
        return 'status' in handed ? handed : route.handler(handed);
      },
    })),
  };
}

export const ipmAbrasfSandbox: MunicipalSandbox = {
  engine: IPM_ABRASF_PROFILE.engine,
  slug: IPM_ABRASF_PROFILE.slug,
  create: (deps) => createIpmAbrasfService(IPM_ABRASF_PROFILE, deps),
};
