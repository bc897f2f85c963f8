import { join } from 'node:path';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readSoap11Call } from '../kit/soap11.ts';
import { at, childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import { createGinfesService, type GinfesSandboxOptions } from '../ginfes/service.ts';
import type { MunicipalSandbox } from '../municipal.ts';

/**
 * Fortaleza's GINFES clone (ACBr ISSFortaleza.Provider.pas; briefs/providers-own.md §3): the GINFES V3 operations and
 * messages (validated, signature-checked and processed by the GINFES sandbox, whose rules and ABRASF 1.0 codes apply
 * unchanged), in Fortaleza's SOAP idiom: the operation element in `http://producao.issfortaleza.com.br` /
 * `http://homologacao.issfortaleza.com.br`, exactly two unqualified parts `<Cabecalho>` and `<{message root}>`
 * (escaped strings); the answer in `<return>`. Fortaleza's own rule: ValorPis, ValorCofins, ValorInss, ValorIr,
 * ValorCsll, ValorIss and Aliquota present in every RPS (ACBr writes them always), else E160. The legacy v2
 * CancelarNfse is not served (its v02 types schema is not public): a Client fault.
 */
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const FORTALEZA_NS = (env: 1 | 2) =>
  env === 1 ? 'http://producao.issfortaleza.com.br' : 'http://homologacao.issfortaleza.com.br';
const GINFES_NS = (env: 1 | 2) => (env === 1 ? 'http://producao.ginfes.com.br' : 'http://homologacao.ginfes.com.br');
const ROOT: Record<string, string> = {
  RecepcionarLoteRpsV3: 'EnviarLoteRpsEnvio',
  ConsultarSituacaoLoteRpsV3: 'ConsultarSituacaoLoteRpsEnvio',
  ConsultarLoteRpsV3: 'ConsultarLoteRpsEnvio',
  ConsultarNfsePorRpsV3: 'ConsultarNfseRpsEnvio',
  ConsultarNfseV3: 'ConsultarNfseEnvio',
};
const REQUIRED_VALORES = ['ValorPis', 'ValorCofins', 'ValorInss', 'ValorIr', 'ValorCsll', 'ValorIss', 'Aliquota'];

const fault = (status: number, code: string, text: string): SandboxReply => ({
  status,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
  body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP_NS}"><soap:Body><soap:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></soap:Fault></soap:Body></soap:Envelope>`,
});

/** The E160 answer to a lote without Fortaleza's always-present values (GINFES's EnviarLoteRpsResposta shape). */
function missingValores(env: 1 | 2, missing: string[]): SandboxReply {
  const answer =
    '<ns3:EnviarLoteRpsResposta xmlns:ns3="http://www.ginfes.com.br/servico_enviar_lote_rps_resposta_v03.xsd" ' +
    'xmlns:tipos="http://www.ginfes.com.br/tipos_v03.xsd"><tipos:ListaMensagemRetorno><tipos:MensagemRetorno>' +
    '<tipos:Codigo>E160</tipos:Codigo><tipos:Mensagem>Arquivo enviado fora da estrutura do arquivo XML de entrada.</tipos:Mensagem>' +
    `<tipos:Correcao>${escapeXml(`Fortaleza: informe ${missing.join(', ')}.`)}</tipos:Correcao></tipos:MensagemRetorno>` +
    '</tipos:ListaMensagemRetorno></ns3:EnviarLoteRpsResposta>';
  return {
    status: 200,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP_NS}"><soap:Body><ns1:RecepcionarLoteRpsV3Response xmlns:ns1="${FORTALEZA_NS(env)}"><return>${escapeXml(answer)}</return></ns1:RecepcionarLoteRpsV3Response></soap:Body></soap:Envelope>`,
  };
}

export function createIssFortalezaService(options: GinfesSandboxOptions): SandboxService {
  const ginfes = createGinfesService({
    ...options,
    dataDir: options.dataDir ? join(options.dataDir, 'issfortaleza') : null,
  });
  const delegate = ginfes.routes[0]!.handler;

  async function post(req: SandboxRequest): Promise<SandboxReply> {
    const env: 1 | 2 = req.params.ambiente === 'producao' ? 1 : 2;
    const read = readSoap11Call(req.body);
    if (!read.ok) return fault(500, read.kind === 'version' ? 'soap:VersionMismatch' : 'soap:Client', read.message);
    const call = read.call;
    const root = call ? ROOT[call.localName] : undefined;
    if (!call || !root) return fault(500, 'soap:Client', `Operação não suportada: ${call?.localName ?? '(vazia)'}`);
    if (call.namespaceURI !== FORTALEZA_NS(env))
      return fault(500, 'soap:Client', `A operação ${call.localName} deve estar no namespace ${FORTALEZA_NS(env)}.`);
    const parts = childElements(call);
    if (
      parts.length !== 2 ||
      parts[0]!.localName !== 'Cabecalho' ||
      parts[1]!.localName !== root ||
      parts.some((p) => p.namespaceURI)
    )
      return fault(500, 'soap:Client', `${call.localName}: esperados Cabecalho e ${root}, não qualificados.`);
    const message = (parts[1]!.textContent ?? '').trim();
    if (call.localName === 'RecepcionarLoteRpsV3') {
      try {
        const valores = at(parseDom(message).documentElement, 'LoteRps/ListaRps/Rps/InfRps/Servico/Valores');
        const present = new Set(valores ? childElements(valores).map((e) => e.localName) : []);
        const missing = REQUIRED_VALORES.filter((n) => !present.has(n));
        if (valores && missing.length > 0) return missingValores(env, missing);
      } catch {
        // malformed: the GINFES sandbox answers E160
      }
    }
    const body =
      `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP_NS}"><soap:Body>` +
      `<ns1:${call.localName} xmlns:ns1="${GINFES_NS(env)}"><arg0>${escapeXml(parts[0]!.textContent ?? '')}</arg0>` +
      `<arg1>${escapeXml(message)}</arg1></ns1:${call.localName}></soap:Body></soap:Envelope>`;
    const reply = await delegate({ ...req, body: Buffer.from(body) });
    return typeof reply.body === 'string'
      ? { ...reply, body: reply.body.replace(`xmlns:ns1="${GINFES_NS(env)}"`, `xmlns:ns1="${FORTALEZA_NS(env)}"`) }
      : reply;
  }

  return {
    ...ginfes,
    family: 'abrasf-v1-issfortaleza',
    name: 'ISS Fortaleza',
    mount: '/municipal/issfortaleza/:ambiente(producao|producaorestrita)',
    routes: [{ name: 'issfortaleza.soap', method: 'POST', path: '/', handler: post }],
  };
}

/** Fortaleza's sandbox as mounted by the sandbox server (`/municipal/issfortaleza/<producao|producaorestrita>`). */
export const issfortalezaSandbox: MunicipalSandbox = {
  engine: 'abrasf-v1:issfortaleza',
  slug: 'issfortaleza',
  create: (deps) => createIssFortalezaService(deps),
};
