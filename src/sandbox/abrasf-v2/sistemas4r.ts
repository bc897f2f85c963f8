import type { MunicipalSandbox } from '../municipal.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import { baselineProfile } from './baseline.ts';
import { soapFault } from './envelope.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * Sistemas4R (ACBr Sistemas4R.Provider.pas, TACBrNFSeXWebservice4R200): GeneXus services, one per operation,
 * `<Op.Execute xmlns="Abrasf2"><Entrada>escaped message</Entrada>` (`h`-prefixed in homologation; ConsultarLoteRps in
 * `AbrasfNFSe`), SOAPAction `Abrasf2action/A[H]<OP>.Execute` (`AbrasfNFSeactionA[H]CONSULTARLOTERPS.Execute`), the
 * answer as the escaped string `Resposta`; RecepcionarLoteRpsSincrono, ConsultarLoteRps, ConsultarNfsePorRps and
 * CancelarNfse only; the official nfse v2.00 XSD; RPS, lote and cancellation signed; the client certificate required.
 * The sandbox serves every operation at its one mount (the per-operation paths are the engine's to choose).
 */
export const SISTEMAS4R_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Sistemas4R', version: '2.00', schema: 'abrasf200' }),
  soap: { namespace: 'Abrasf2', operationCase: 'pascal' },
  operations: ['RecepcionarLoteRpsSincrono', 'ConsultarLoteRps', 'ConsultarNfsePorRps', 'CancelarNfse'],
};

const OPERATIONS: Record<string, { namespace: string; action: string }> = {
  RecepcionarLoteRpsSincrono: { namespace: 'Abrasf2', action: 'Abrasf2action/A{H}RECEPCIONARLOTERPSSINCRONO.Execute' },
  ConsultarLoteRps: { namespace: 'AbrasfNFSe', action: 'AbrasfNFSeactionA{H}CONSULTARLOTERPS.Execute' },
  ConsultarNfsePorRps: { namespace: 'Abrasf2', action: 'Abrasf2action/A{H}CONSULTARNFSEPORRPS.Execute' },
  CancelarNfse: { namespace: 'Abrasf2', action: 'Abrasf2action/A{H}CANCELARNFSE.Execute' },
};

function sistemas4rRequest(
  req: SandboxRequest,
): { request: SandboxRequest; element: string; ns: string } | SandboxReply {
  const text = req.body.toString('utf8');
  let body: Element | undefined;
  try {
    body = childElements(parseDom(text).documentElement!).find((e) => e.localName === 'Body');
  } catch (err) {
    return soapFault(500, 'Client', `XML mal formado: ${(err as Error).message}`);
  }
  const operation = body ? childElements(body)[0] : undefined;
  const homologation = req.params.ambiente !== 'producao';
  const name = /^(h?)(\w+)\.Execute$/.exec(operation?.localName ?? '');
  const known = name ? OPERATIONS[name[2]!] : undefined;
  if (!operation || !name || !known || operation.namespaceURI !== known.namespace)
    return soapFault(500, 'Client', `Operação desconhecida: ${operation?.localName ?? '(corpo vazio)'}`);
  if ((name[1] === 'h') !== homologation)
    return soapFault(500, 'Client', `${operation.localName} não é deste ambiente.`);
  const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
  if (action !== known.action.replace('{H}', homologation ? 'H' : ''))
    return soapFault(500, 'Client', `SOAPAction inválida: ${action || '(sem SOAPAction)'}`);
  const entrada = childElements(operation);
  if (entrada.length !== 1 || entrada[0]!.localName !== 'Entrada' || childElements(entrada[0]!).length > 0)
    return soapFault(500, 'Client', 'Entrada (a mensagem escapada) esperada.');
  const wrapped =
    `<nfse:${name[2]}Request xmlns:nfse="http://nfse.abrasf.org.br">` +
    `<nfseDadosMsg>${escapeXml(entrada[0]!.textContent ?? '')}</nfseDadosMsg></nfse:${name[2]}Request>`;
  const rewritten = text.replace(/(<(?:[\w-]+:)?Body\b[^>]*>)[\s\S]*(<\/(?:[\w-]+:)?Body>)/, `$1${wrapped}$2`);
  return {
    request: { ...req, body: Buffer.from(rewritten, 'utf8'), json: () => null },
    element: operation.localName!,
    ns: known.namespace,
  };
}

/** The generic `outputXML` answer as `<Op.ExecuteResponse><Resposta>`. */
function sistemas4rReply(reply: SandboxReply, element: string, ns: string): SandboxReply {
  if (typeof reply.body !== 'string') return reply;
  const output = /<outputXML>([\s\S]*)<\/outputXML>/.exec(reply.body);
  if (!output) return reply;
  const inner = `<${element}Response xmlns="${ns}"><Resposta>${output[1]}</Resposta></${element}Response>`;
  return { ...reply, body: reply.body.replace(/(<soap:Body>)[\s\S]*(<\/soap:Body>)/, `$1${inner}$2`) };
}

export function createSistemas4rService(profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions): SandboxService {
  const service = createAbrasfService(profile, options);
  return {
    ...service,
    routes: service.routes.map((route) => ({
      ...route,
      handler: async (req: SandboxRequest) => {
        const handed = sistemas4rRequest(req);
        if ('status' in handed) return handed;
        return sistemas4rReply(await route.handler(handed.request), handed.element, handed.ns);
      },
    })),
  };
}

export const sistemas4rSandbox: MunicipalSandbox = {
  engine: SISTEMAS4R_PROFILE.engine,
  slug: SISTEMAS4R_PROFILE.slug,
  create: (deps) => createSistemas4rService(SISTEMAS4R_PROFILE, deps),
};
