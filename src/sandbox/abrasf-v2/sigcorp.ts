import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readSoap11Call } from '../kit/soap11.ts';
import type { MunicipalSandbox } from '../municipal.ts';
import { baselineProfile } from './baseline.ts';
import { soapFault } from './envelope.ts';
import { withFaixaQuery, type AbrasfSandboxProfile } from './profiles.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * SigCorp 2.04 (ACBr SigCorp.Provider.pas, TACBrNFSeXWebserviceSigCorp204; the provider's nfse.xsd 2.04 as ACBr ships
 * it; the per-city service data of ACBrNFSeXServicos.ini). One sandbox answers every city, as each city's own host
 * would:
 * - SOAP 1.1; the operation element in a city namespace, `https://abrasf<city>.meumunicipio.online/ws[/nfs]` in
 *   production and `https://teste<city>abrasf.meumunicipio.online/ws[/nfs]` in training (the two host forms of every
 *   SigCorp namespace in the ini); a namespace of the other environment, or any other, is a SOAP Client fault;
 * - the SOAPAction must be the city's action + `#` + the operation: the ini's SoapAction of a city is its namespace
 *   or the namespace's last path segment (`ws`, `nfs`), so both forms are accepted (a Client fault otherwise);
 * - the idiom follows the namespace: the `/ws/nfs` cities (the ini's `SubVersao=1`) take `<Op>Request{nfseCabecMsg,
 *   nfseDadosMsg}` and answer `outputXML`; the `/ws` cities take `<Op><xml>` (the message as a CDATA or escaped
 *   string, no cabecalho) and answer `<Op>Result`; the other form is a Client fault. The range query is
 *   `ConsultarNfseFaixa` (NumeroNfseFinal required by the XSD).
 * - the ABRASF work (XSD validation against the SigCorp schema, RPS/lote/cancellation signatures, the client
 *   certificate: E182, lotes, E-codes) is the generic ABRASF 2.0x service's; answers are written in the city's
 *   namespace. The `/ws/nfs` and `/ws` idioms are two deployments, each with its own numbering (store).
 */
const PLACEHOLDER_NS = 'urn:sandbox:sigcorp';
const CITY_NS = /^https:\/\/(?:abrasf([a-z]+)|teste([a-z]+)abrasf)\.meumunicipio\.online\/ws(\/nfs)?$/;

export const SIGCORP_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'SigCorp', version: '2.04', schema: 'abrasf204SigCorp' }),
  soap: { namespace: PLACEHOLDER_NS, operationCase: 'pascal' },
  request: 'inline',
  stringParameter: 'xml',
  response: 'result',
  ...withFaixaQuery(),
  rangeNeedsEnd: true,
};

/** The `/ws/nfs` deployments (`SubVersao=1`): the official strings in `<Op>Request`, `outputXML` answers. */
const { stringParameter: _, ...strings } = SIGCORP_PROFILE;
export const SIGCORP_NFS_PROFILE: AbrasfSandboxProfile = {
  ...strings,
  family: 'abrasf-v2-sigcorp-nfs',
  request: 'strings',
  stringsWrapper: 'request',
  response: 'outputXML',
};

export function createSigcorpService(options: AbrasfSandboxOptions): SandboxService {
  const plain = createAbrasfService(SIGCORP_PROFILE, options);
  const nfs = createAbrasfService(SIGCORP_NFS_PROFILE, options);
  const fault = (text: string) => soapFault(500, 'Client', text);

  async function soapPost(req: SandboxRequest): Promise<SandboxReply> {
    const read = readSoap11Call(req.body);
    if (!read.ok) return fault(read.message);
    const call = read.call;
    const namespace = call?.namespaceURI ?? '';
    const city = CITY_NS.exec(namespace);
    if (!call || !city) return fault(`Namespace não atendido: ${namespace || '(sem namespace)'}`);
    if ((req.params.ambiente === 'producao') !== (city[1] !== undefined))
      return fault(`O namespace ${namespace} não é deste ambiente.`);
    const operation = call.localName!.replace(/Request$/, '');
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    const segment = namespace.slice(namespace.lastIndexOf('/') + 1);
    if (action !== `${namespace}#${operation}` && action !== `${segment}#${operation}`)
      return fault(`SOAPAction ${action || '(vazia)'} não corresponde a ${namespace}#${operation}.`);
    const reply = await (city[3] ? nfs : plain).routes[0]!.handler(req);
    return { ...reply, body: String(reply.body).replaceAll(PLACEHOLDER_NS, namespace) };
  }

  return { ...plain, routes: [{ ...plain.routes[0]!, handler: soapPost }] };
}

export const sigcorpSandbox: MunicipalSandbox = {
  engine: SIGCORP_PROFILE.engine,
  slug: SIGCORP_PROFILE.slug,
  create: (deps) => createSigcorpService(deps),
};
