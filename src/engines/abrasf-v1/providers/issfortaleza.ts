import { childElements, findDescendant, parseXml } from '../../../xml/read.ts';
import { ginfesFamily } from '../../ginfes/family.ts';
import type { FamilyDefinition, Operation, OperationRequest, SendContext } from '../../kit/family.ts';
import { soapEnvelope } from '../../kit/soap.ts';

/**
 * ISSFortaleza: Fortaleza/CE (2304400) runs a GINFES clone (briefs/providers-own.md §3; ACBr ISSFortaleza.Provider.pas
 * and ISSFortaleza.GravarXml.pas, frones/ACBr 0db659ba/35623577): the GINFES v3 messages, namespaces, cabeçalho
 * (versao 3) and signatures (LoteRps@Id; every consultation signed whole), so the messages and the answers' reading
 * are the GINFES family's; only the SOAP idiom differs, and is rewritten here:
 * - the operation element (RecepcionarLoteRpsV3, ConsultarSituacaoLoteRpsV3, ConsultarLoteRpsV3,
 *   ConsultarNfsePorRpsV3, ConsultarNfseV3) in `http://producao.issfortaleza.com.br` /
 *   `http://homologacao.issfortaleza.com.br`, its parts unqualified `<Cabecalho>` and `<{message root}>` (instead of
 *   GINFES's `arg0`/`arg1`), escaped strings, SOAPAction empty; one URL (ServiceGinfesImplService, the registry's).
 * - ACBr writes Aliquota (a fraction: DivAliq100), ValorPis, ValorCofins, ValorInss, ValorIr, ValorCsll and ValorIss
 *   always (NrOcorr… = 1): they are written here with 0.00 / 0.0000 when the GINFES builder would leave them out.
 * Not offered here: cancellation. Fortaleza cancels with the legacy GINFES v2 `CancelarNfse` (servico_cancelar_nfse_envio
 * v02, types `http://www.ginfes.com.br/tipos`), whose `tipos_v02.xsd` was not found in any public source: without it
 * the message cannot be validated, so it is not sent (capabilities.cancel false → CANCEL_NOT_SUPPORTED).
 * Conservative readings: the CNAE stays required (the GINFES rule); the note link is the registry's GINFES report.
 */
const SERVICE_NS = (ambiente: 1 | 2) =>
  ambiente === 1 ? 'http://producao.issfortaleza.com.br' : 'http://homologacao.issfortaleza.com.br';
const ALWAYS = ['ValorPis', 'ValorCofins', 'ValorInss', 'ValorIr', 'ValorCsll', 'ValorIss', 'Aliquota'];
const VALORES_ORDER = [
  'ValorServicos',
  'ValorDeducoes',
  ...ALWAYS.slice(0, 5),
  'IssRetido',
  'ValorIss',
  'ValorIssRetido',
];
const ORDER = [
  ...VALORES_ORDER,
  'OutrasRetencoes',
  'BaseCalculo',
  'Aliquota',
  'ValorLiquidoNfse',
  'DescontoIncondicionado',
  'DescontoCondicionado',
];

/** The lote's Valores with Fortaleza's always-present fields (in tcValores order). */
function withFortalezaValores(xml: string): string {
  return xml.replace(/<tipos:Valores>([\s\S]*?)<\/tipos:Valores>/, (_all, inner: string) => {
    const values = new Map([...inner.matchAll(/<tipos:(\w+)>([^<]*)<\/tipos:\1>/g)].map((m) => [m[1]!, m[2]!]));
    for (const name of ALWAYS) if (!values.has(name)) values.set(name, name === 'Aliquota' ? '0.0000' : '0.00');
    const ordered = ORDER.filter((n) => values.has(n)).map((n) => `<tipos:${n}>${values.get(n)}</tipos:${n}>`);
    return `<tipos:Valores>${ordered.join('')}</tipos:Valores>`;
  });
}

/** A GINFES request (arg0 = cabeçalho, arg1 = message) in Fortaleza's SOAP idiom. */
function fortaleza(request: OperationRequest, context: SendContext): OperationRequest {
  const parsed = parseXml(request.body ?? '');
  const call = parsed.ok ? childElements(findDescendant(parsed.root, 'Body') ?? parsed.root)[0] : undefined;
  const args = call ? childElements(call) : [];
  const message = args[1]?.textContent ?? '';
  const root = /^\s*<(?:\w+:)?(\w+)/.exec(message)?.[1];
  if (!call || !root) throw new Error('ISSFortaleza: not a GINFES V3 request');
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: SERVICE_NS(context.ambiente),
    operation: call.localName,
    parts: [
      { name: 'Cabecalho', value: args[0]?.textContent ?? '', encoding: 'escaped', qualified: false },
      { name: root, value: message, encoding: 'escaped', qualified: false },
    ],
    soapAction: '',
  });
  return { ...request, headers, body };
}

function adapt<In, Out>(operation: Operation<In, Out>): Operation<In, Out> {
  if ('exchange' in operation) {
    return {
      exchange: (input, context, send) => operation.exchange(input, context, (r) => send(fortaleza(r, context))),
    };
  }
  return { request: (input, context) => fortaleza(operation.request(input, context), context), parse: operation.parse };
}

const { emit, poll, query } = ginfesFamily.operations;

export const issFortalezaFamily: FamilyDefinition = {
  ...ginfesFamily,
  id: 'abrasf-v1',
  provider: 'ISSFortaleza',
  layout: 'ABRASF 1.00 (ISSFortaleza: GINFES v3 clone, Cabecalho + message parts, asynchronous lotes)',
  capabilities: { ...ginfesFamily.capabilities, cancel: false },
  declaration: {
    ...ginfesFamily.declaration,
    build: (input) => {
      const built = ginfesFamily.declaration.build(input);
      return { id: built.id, xml: withFortalezaValores(built.xml) };
    },
  },
  operations: { emit: adapt(emit), ...(poll ? { poll: adapt(poll) } : {}), query: adapt(query) },
  pdfLink: (issued) =>
    issued.numero && issued.verificationCode
      ? `http://fortaleza.${issued.ambiente === 1 ? 'ginfes' : 'ginfesh'}.com.br/report/consultarNota?__report=nfs_ver4` +
        `&cdVerificacao=${encodeURIComponent(issued.verificationCode)}&numNota=${encodeURIComponent(issued.numero)}&cnpjPrestador=null`
      : null,
};
