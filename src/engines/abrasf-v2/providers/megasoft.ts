import { formatDateTimeWithOffset } from '../../../xml/datetime.ts';
import { escapeXmlAttr } from '../../../xml/escape.ts';
import type { PrepareInput } from '../../types.ts';
import { type AbrasfProviderConfig, notOffered } from '../config.ts';
import { cpfCnpj, el, nsAttr, prestador } from '../messages.ts';

/**
 * MegaSoft ArrecadaNet (briefs/providers-abrasf.md §6; megasoft/nfseSOAP.wsdl from akretion/nfselib
 * HCrominiaGO-MEGASOFT.wsdl; megasoft/nfse_v01.xsd from OpenAC Schemas/MegaSoft/2.00; ACBr MegaSoft.Provider.pas):
 * 116 small cities (TO, AP, GO) at `https://<city>.megasoftarrecadanet.com.br/<city>/ws/nfseSOAP`.
 * - WSDL: tns `http://ws.megasoftarrecadanet.com.br`, only `GerarNfse` and `ConsultarNfsePorRps`, both
 *   `<Op>Request{nfseCabecMsg, nfseDadosMsg}` → `<Op>Response/outputXML`; SOAPAction `<tns>/<Op>`.
 * - ACBr sends GerarNfse in CDATA and ConsultarNfsePorRps escaped (the per-operation `encoding`).
 * - data and cabecalho in `http://megasoftarrecadanet.com.br/xsd/nfse_v01.xsd`; cabecalho `versao="1.00"`.
 * - XSD: a cut-down ABRASF 2.00: IdentificacaoRps is Numero only (no Serie/Tipo), Rps/DataEmissao a dateTime, no
 *   Competencia, ItemListaServico, CNAE, ExigibilidadeISS, Optante, Incentivo or RegimeEspecial; Valores without
 *   ValorIss; Tomador without Contato; Endereco without Uf; InscricaoMunicipal required in Prestador.
 * - signature: only the RPS of GerarNfse (ACBr); client certificate on TLS (auth `mtls`). No homologation.
 * Conservative readings: GerarNfse is the only emission; no cancellation, lote or range query through the web
 * service (capabilities cancel/batch false); CodigoTributacaoMunicipio only when the invoice carries the municipal
 * code (nothing is derived from the LC 116 item); DataEmissao in Brasília time without an offset (ACBr's form).
 */
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');
const cut = (value: string | null | undefined, max: number) => (value ? value.trim().slice(0, max) : null);
const wrap = (name: string, inner: string) => (inner ? `<${name}>${inner}</${name}>` : '');

function buildMegaSoftRps(config: AbrasfProviderConfig, input: PrepareInput): { id: string; xml: string } {
  const { project, invoice } = input;
  const { servico: s, iss, federal, total, tomador: t } = invoice;
  const numero = String(input.number);
  const id = `RPS${digits(project.cnpj)}N${numero}`;
  const pis = federal?.pisCofins?.tipoRetencao === 1 ? federal.pisCofins : null;
  const positive = (value: number | null | undefined) => (value && value > 0 ? value.toFixed(2) : null);
  const taxable = iss.tribISSQN === 1 && iss.aliquota > 0;
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : project.codigoMunicipio;
  const takerId = t.id.kind === 'cnpj' ? t.id.cnpj : t.id.kind === 'cpf' ? t.id.cpf : null;
  const a = t.endereco?.nacional ? t.endereco : null;
  const endereco = wrap(
    'Endereco',
    el('Endereco', cut(a?.logradouro, 125)) +
      el('Numero', cut(a?.numero, 10)) +
      el('Complemento', cut(a?.complemento, 60)) +
      el('Bairro', cut(a?.bairro, 60)) +
      el('Cep', digits(a?.cep).slice(0, 8) || null) +
      el('CodigoMunicipio', a?.codigoMunicipio),
  );
  const xml =
    `<Rps${nsAttr(config)}><InfDeclaracaoPrestacaoServico Id="${escapeXmlAttr(id)}">` +
    `<Rps><IdentificacaoRps>${el('Numero', numero)}</IdentificacaoRps>` +
    `${el('DataEmissao', formatDateTimeWithOffset(input.issuedAt, -180).slice(0, 19))}</Rps>` +
    `<Servico><Valores>${el('ValorServicos', total.toFixed(2))}${el('ValorPis', positive(pis?.valorPis))}` +
    `${el('ValorCofins', positive(pis?.valorCofins))}${el('ValorInss', positive(federal?.retencaoCp))}` +
    `${el('ValorIr', positive(federal?.retencaoIrrf))}${el('ValorCsll', positive(federal?.retencaoCsll))}` +
    `${el('Aliquota', taxable ? iss.aliquota.toFixed(2) : null)}</Valores>` +
    `${el('IssRetido', iss.retido ? '1' : '2')}${el('CodigoMunicipio', local)}` +
    `${el('CodigoTributacaoMunicipio', cut(s.codigoTributacaoMunicipal, 20))}` +
    `${el('Discriminacao', s.descricao.replace(/\r?\n/g, config.formats.lineBreak).slice(0, 2000))}</Servico>` +
    `<Prestador>${prestador(project.cnpj, project.inscricaoMunicipal)}</Prestador>` +
    wrap(
      'Tomador',
      wrap(
        'IdentificacaoTomador',
        (takerId ? cpfCnpj(takerId) : '') + el('InscricaoMunicipal', cut(t.inscricaoMunicipal, 15)),
      ) +
        el('RazaoSocial', cut(t.nome, 150)) +
        endereco,
    ) +
    '</InfDeclaracaoPrestacaoServico></Rps>';
  return { id, xml };
}

/** not in the WSDL: the web service offers GerarNfse and ConsultarNfsePorRps only */
export const MEGASOFT_CONFIG: AbrasfProviderConfig = {
  provider: 'MegaSoft',
  version: '2.00',
  schema: 'abrasf200MegaSoft',
  sources: 'megasoft/nfseSOAP.wsdl (nfselib); OpenAC Schemas/MegaSoft/2.00/nfse_v01.xsd; ACBr MegaSoft.Provider.pas',
  soap: {
    version: '1.1',
    namespace: 'http://ws.megasoftarrecadanet.com.br',
    operationCase: 'pascal',
    soapAction: 'http://ws.megasoftarrecadanet.com.br/{op}',
  },
  body: { style: 'abrasfRequest', encoding: 'cdata', cabecalho: true, cabecalhoVersion: '1.00', credentials: false },
  dataNamespace: 'http://megasoftarrecadanet.com.br/xsd/nfse_v01.xsd',
  auth: 'mtls',
  signature: { rps: true, lote: false, cancel: false },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n', rpsIdentification: 'numero' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 1, queryPage: 1 },
  cancellation: { defaultCode: '1' },
  operations: {
    queryByRps: { encoding: 'escaped' },
    ...notOffered('emitAsyncBatch', 'emitSyncBatch', 'queryBatch', 'queryRange', 'cancel', 'replace'),
  },
  hooks: { buildRps: buildMegaSoftRps },
  capabilities: { cancel: false, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: false },
};
