import type { SchemaName } from '../../xml/xsd.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { child, childElements, parseDom } from '../kit/xml-dom.ts';
import type { MunicipalSandbox } from '../municipal.ts';
import { baselineProfile } from './baseline.ts';
import { SOAP11, soapFault } from './envelope.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * Actcon 2.02 (portalfacil.com.br; ACBr Actcon.Provider.pas, TACBrNFSeXWebserviceActcon200; the city schemas ACBr
 * ships; the per-city service data of ACBrNFSeXServicos.ini). One sandbox answers every city and environment whose
 * public data agree, as each city's own host would:
 * - SOAP 1.1; `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in the city's operation namespace for the environment (its
 *   `Pro/HomNameSpace`), answered in `outputXML`; a namespace of another city, of the other environment or unknown
 *   is a SOAP Client fault;
 * - the SOAPAction must be the city's `Pro/HomSoapAction` + the operation (a Client fault otherwise);
 * - the messages are in the city's data namespace for the environment and validated by that city's schema (a
 *   message in any other namespace fails it: E160); the lote and the cancellation signed, the client certificate
 *   required (E182): the generic ABRASF 2.0x service's work, one deployment (store, numbering) per city and
 *   environment. The cabecalho's versao is VersaoAtrib 1.00 over versaoDados 2.02.
 * Served: Além Paraíba (3101508) in production, the one city and environment whose public schema (ACBr
 * `Schemas/NFSe/Actcon/2.02/3101508/Producao/nfse_v202.xsd`) declares the ini's data namespace.
 */
interface ActconDeployment {
  municipality: string;
  ambiente: 1 | 2;
  /** the WSDL namespace of the operation elements (ini `ProNameSpace`/`HomNameSpace`) */
  operationNamespace: string;
  /** the SOAPAction prefix (ini `ProSoapAction`/`HomSoapAction`) */
  soapAction: string;
  /** the messages' namespace (ini `ProXMLNameSpace`/`HomXMLNameSpace`), the target namespace of `schema` */
  dataNamespace: string;
  schema: SchemaName;
}

const ALEM_PARAIBA = 'http://nfse-mg-alemparaiba.portalfacil.com.br/nfseserv';
const DEPLOYMENTS: readonly ActconDeployment[] = [
  {
    municipality: '3101508',
    ambiente: 1,
    operationNamespace: `${ALEM_PARAIBA}/webservice/nfse.wsdl`,
    soapAction: `${ALEM_PARAIBA}/webservice/servicos#`,
    dataNamespace: `${ALEM_PARAIBA}/schema/nfse_v202.xsd`,
    schema: 'abrasf202ActconAlemParaibaProducao',
  },
];

export const ACTCON_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'Actcon', version: '2.02', schema: DEPLOYMENTS[0]!.schema }),
  dataNamespace: DEPLOYMENTS[0]!.dataNamespace,
  soap: { namespace: DEPLOYMENTS[0]!.operationNamespace, operationCase: 'pascal' },
  request: 'strings',
  stringsWrapper: 'request',
  response: 'outputXML',
  signature: { rps: false, lote: true, cancel: true },
  // TNFSeW_Actcon202: DivAliq100 (no served city has NaoDividir100)
  aliquota: 'fraction',
};

/** The profile of one city's deployment: its namespaces, SOAPAction prefix and schema. */
export function actconDeploymentProfile(deployment: ActconDeployment): AbrasfSandboxProfile {
  return {
    ...ACTCON_PROFILE,
    family: `${ACTCON_PROFILE.family}-${deployment.municipality}-${deployment.ambiente === 1 ? 'producao' : 'homologacao'}`,
    schema: deployment.schema,
    dataNamespace: deployment.dataNamespace,
    soap: { namespace: deployment.operationNamespace, operationCase: 'pascal' },
    soapActionPrefix: deployment.soapAction,
  };
}

export function createActconService(options: AbrasfSandboxOptions): SandboxService {
  const services = new Map(
    DEPLOYMENTS.map((d) => [d.operationNamespace, createAbrasfService(actconDeploymentProfile(d), options)]),
  );
  const first = services.get(DEPLOYMENTS[0]!.operationNamespace)!;
  const fault = (text: string) => soapFault(500, 'Client', text);

  async function soapPost(req: SandboxRequest): Promise<SandboxReply> {
    let envelope: Element | null;
    try {
      envelope = parseDom(req.body.toString('utf8')).documentElement;
    } catch (err) {
      return fault(`XML malformado: ${(err as Error).message}`);
    }
    if (envelope?.localName !== 'Envelope' || envelope.namespaceURI !== SOAP11) return fault('Somente SOAP 1.1.');
    const call = childElements(child(envelope, 'Body') ?? envelope)[0];
    const namespace = call?.namespaceURI ?? '';
    const deployment = DEPLOYMENTS.find((d) => d.operationNamespace === namespace);
    if (!call || !deployment) return fault(`Namespace não atendido: ${namespace || '(sem namespace)'}`);
    if ((req.params.ambiente === 'producao') !== (deployment.ambiente === 1))
      return fault(`O namespace ${namespace} não é deste ambiente.`);
    return services.get(namespace)!.routes[0]!.handler(req);
  }

  return { ...first, routes: [{ ...first.routes[0]!, handler: soapPost }] };
}

export const actconSandbox: MunicipalSandbox = {
  engine: ACTCON_PROFILE.engine,
  slug: ACTCON_PROFILE.slug,
  create: (deps) => createActconService(deps),
};
