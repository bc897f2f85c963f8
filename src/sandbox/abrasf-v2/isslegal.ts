import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { baselineProfile } from './baseline.ts';
import { parseCall, soapAnswer } from './envelope.ts';
import { ABRASF_DATA_NS, type AbrasfSandboxProfile } from './profiles.ts';
import { digitsOf, listaMensagens, official } from './rules.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * ISSLegal (ACBr ISSLegal.Provider.pas, TACBrNFSeProviderISSLegal203): the official 2.03 message set
 * (`<Op>Request{nfseCabecMsg, nfseDadosMsg}`, `outputXML`), the official nfse_v203.xsd, nothing signed, the client
 * certificate required (E182) and the taxpayer's authorization key in the HTTP `Authorization` header.
 * The generic ABRASF service does the contract; this layer checks the key first.
 * Readings (strict): no key, or not the known one of the message's CNPJ, is refused with E179 in the answer message.
 */
export const ISSLEGAL_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'ISSLegal', version: '2.03', schema: 'abrasf203' }),
  signature: { rps: false, lote: false, cancel: false },
};

const ANSWER_ROOTS: Record<string, string> = {
  GerarNfse: 'GerarNfseResposta',
  RecepcionarLoteRps: 'EnviarLoteRpsResposta',
  RecepcionarLoteRpsSincrono: 'EnviarLoteRpsSincronoResposta',
  ConsultarLoteRps: 'ConsultarLoteRpsResposta',
  ConsultarNfsePorRps: 'ConsultarNfseRpsResposta',
  ConsultarNfsePorFaixa: 'ConsultarNfseFaixaResposta',
  ConsultarNfseServicoPrestado: 'ConsultarNfseServicoPrestadoResposta',
  ConsultarNfseServicoTomado: 'ConsultarNfseServicoTomadoResposta',
  CancelarNfse: 'CancelarNfseResposta',
  SubstituirNfse: 'SubstituirNfseResposta',
};

/** The key check: null when the request may go on, else the refusal in the operation's answer message. */
function keyProblem(profile: AbrasfSandboxProfile, req: SandboxRequest): SandboxReply | null {
  const call = parseCall(profile, req.body.toString('utf8'));
  if ('error' in call) return null; // the generic service answers the malformed call
  const root = ANSWER_ROOTS[call.operation];
  if (!root) return null;
  const refuse = (correcao: string) =>
    soapAnswer(
      profile,
      call,
      `<${root} xmlns="${ABRASF_DATA_NS}">${listaMensagens([official('E179', correcao)])}</${root}>`,
    );
  const key = (req.headers.authorization ?? '').trim();
  if (!key) return refuse('Informe a chave de autorização no cabeçalho Authorization.');
  const known = profile.knownCredentials?.[digitsOf(/<Cnpj>([^<]*)<\/Cnpj>/.exec(call.message ?? '')?.[1])];
  return known && known.password !== key ? refuse('Chave de autorização inválida.') : null;
}

export function createIssLegalService(profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions): SandboxService {
  const service = createAbrasfService(profile, options);
  return {
    ...service,
    routes: service.routes.map((route) => ({
      ...route,
      handler: (req: SandboxRequest) => keyProblem(profile, req) ?? route.handler(req),
    })),
  };
}

export const isslegalSandbox: MunicipalSandbox = {
  engine: ISSLEGAL_PROFILE.engine,
  slug: ISSLEGAL_PROFILE.slug,
  create: (deps) => createIssLegalService(ISSLEGAL_PROFILE, deps),
};
