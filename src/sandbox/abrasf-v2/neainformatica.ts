import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { baselineProfile } from './baseline.ts';
import { soapFault } from './envelope.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * NEA Informática (ACBr NEAInformatica.Provider.pas, TACBrNFSeProviderNEAInformatica200): the official operation
 * element in `http://nfse.abrasf.org.br` holding one parameter named `<Op>Envio` after the operation with the message
 * in CDATA, no cabecalho, SOAPAction "", answers in `outputXML`; the official nfse v2.00 XSD; RPS, lote and
 * cancellation signed; plain http (no client certificate).
 * The generic ABRASF service does the contract; this layer checks the parameter (its name per operation, a string)
 * and hands the message on inline in the operation element.
 */
export const NEAINFORMATICA_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'NEAInformatica', version: '2.00', schema: 'abrasf200' }),
  request: 'inline',
  clientCertificate: false,
};

/** The parameter of each operation (ACBr's request of each). */
const PARAMETERS: Record<string, string> = {
  RecepcionarLoteRps: 'EnviarLoteRpsEnvio',
  RecepcionarLoteRpsSincrono: 'EnviarLoteRpsSincronoEnvio',
  GerarNfse: 'GerarNfseEnvio',
  ConsultarLoteRps: 'ConsultarLoteRpsEnvio',
  ConsultarNfsePorRps: 'ConsultarNfsePorRpsEnvio',
  ConsultarNfsePorFaixa: 'ConsultarNfsePorFaixaEnvio',
  ConsultarNfseServicoPrestado: 'ConsultarNfseServicoPrestadoEnvio',
  ConsultarNfseServicoTomado: 'ConsultarNfseServicoTomadoEnvio',
  CancelarNfse: 'CancelarNfseEnvio',
  SubstituirNfse: 'SubstituirNfseEnvio',
};

function neaRequest(req: SandboxRequest): SandboxRequest | SandboxReply {
  const text = req.body.toString('utf8');
  const op = /<(?:[\w-]+:)?Body\b[^>]*>\s*<(?:[\w-]+:)?(\w+)\b[^>]*>/.exec(text);
  if (!op) return soapFault(500, 'Client', 'Corpo SOAP sem operação.');
  const parameter = PARAMETERS[op[1]!];
  if (!parameter) return soapFault(500, 'Client', `Operação desconhecida: ${op[1]}`);
  const start = op.index + op[0].length;
  const param = new RegExp(`^\\s*<${parameter}>\\s*<!\\[CDATA\\[([\\s\\S]*?)\\]\\]>\\s*</${parameter}>`).exec(
    text.slice(start),
  );
  if (!param) return soapFault(500, 'Client', `Parâmetro ${parameter} (texto CDATA) ausente em ${op[1]}.`);
  const message = param[1]!.replace(/^\s*<\?xml[^>]*\?>/, '');
  const body = text.slice(0, start) + message + text.slice(start + param[0].length);
  return { ...req, body: Buffer.from(body, 'utf8'), json: () => null };
}

export function createNeaInformaticaService(
  profile: AbrasfSandboxProfile,
  options: AbrasfSandboxOptions,
): SandboxService {
  const service = createAbrasfService(profile, options);
  return {
    ...service,
    routes: service.routes.map((route) => ({
      ...route,
      handler: (req: SandboxRequest) => {
        const handed = neaRequest(req);
        return 'status' in handed ? handed : route.handler(handed);
      },
    })),
  };
}

export const neainformaticaSandbox: MunicipalSandbox = {
  engine: NEAINFORMATICA_PROFILE.engine,
  slug: NEAINFORMATICA_PROFILE.slug,
  create: (deps) => createNeaInformaticaService(NEAINFORMATICA_PROFILE, deps),
};
