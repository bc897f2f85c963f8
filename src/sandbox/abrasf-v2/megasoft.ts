import { findMunicipality } from '../../domain/municipalities.ts';
import { escapeXml } from '../kit/xml-dom.ts';
import { signEnveloped } from '../kit/xml-signature.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { ABRASF_SIGNATURE_PROFILE, type ComposeNfseOptions } from './rules.ts';

/**
 * MegaSoft ArrecadaNet (briefs/providers-abrasf.md §6): nfseSOAP.wsdl (GerarNfse and ConsultarNfsePorRps only,
 * `<Op>Request{nfseCabecMsg, nfseDadosMsg}` → outputXML) and nfse_v01.xsd (namespace
 * `http://megasoftarrecadanet.com.br/xsd/nfse_v01.xsd`, a cut-down ABRASF 2.00). Only the RPS is signed; the
 * client certificate is required on TLS (ACBr presents it; E182 otherwise). Every other operation answers a SOAP
 * Client fault, as a server whose WSDL does not declare it.
 * Readings: the answer to GerarNfse is the XSD's `GerarNfseResposta` (ListaNfse/CompNfse), not `NfseGerada`
 * (declared in the XSD but referenced by no message); the NFS-e is the XSD's tcNfse: ValoresNfse with Aliquota,
 * ValorIss and Deducao always present (0.00 when none), no ValorLiquidoNfse, PrestadorServico with an Endereco, no
 * Uf in addresses, the signed declaration inside.
 */
export const MEGASOFT_NS = 'http://megasoftarrecadanet.com.br/xsd/nfse_v01.xsd';

export function composeMegaSoftNfse(options: ComposeNfseOptions): string {
  const { rps } = options;
  const el = (name: string, value: string | null | undefined) =>
    value ? `<${name}>${escapeXml(value)}</${name}>` : '';
  const money = (value: number) => value.toFixed(2);
  const id = `<CpfCnpj>${rps.prestador.length === 11 ? el('Cpf', rps.prestador) : el('Cnpj', rps.prestador)}</CpfCnpj>`;
  const unsigned =
    `<Nfse xmlns="${MEGASOFT_NS}" versao="1.00"><InfNfse Id="NFSE${rps.prestador}N${options.numero}">` +
    el('Numero', options.numero) +
    el('CodigoVerificacao', options.codigoVerificacao) +
    el('DataEmissao', options.dataEmissao) +
    `<ValoresNfse>${el('BaseCalculo', money(rps.valorServicos))}${el('Aliquota', rps.aliquota ?? '0.00')}` +
    `${el('ValorIss', money(rps.valorIss))}<Deducao>0.00</Deducao></ValoresNfse>` +
    `<PrestadorServico><IdentificacaoPrestador>${id}${el('InscricaoMunicipal', rps.inscricaoMunicipal)}</IdentificacaoPrestador>` +
    `${el('RazaoSocial', options.razaoSocial.slice(0, 150) || rps.prestador)}` +
    `<Endereco>${el('CodigoMunicipio', rps.codigoMunicipio)}</Endereco></PrestadorServico>` +
    `<OrgaoGerador>${el('CodigoMunicipio', rps.codigoMunicipio)}${el('Uf', findMunicipality(rps.codigoMunicipio)?.uf ?? 'TO')}</OrgaoGerador>` +
    `<DeclaracaoPrestacaoServico>${rps.declaracaoXml}</DeclaracaoPrestacaoServico></InfNfse></Nfse>`;
  return signEnveloped(
    unsigned,
    { rootName: 'Nfse', elementName: 'InfNfse' },
    options.signer,
    ABRASF_SIGNATURE_PROFILE,
  );
}

export const MEGASOFT_PROFILE: AbrasfSandboxProfile = {
  provider: 'MegaSoft',
  engine: 'abrasf-v2:megasoft',
  slug: 'abrasf-megasoft',
  family: 'abrasf-v2-megasoft',
  version: '1.00',
  schema: 'abrasf200MegaSoft',
  dataNamespace: MEGASOFT_NS,
  soap: { namespace: 'http://ws.megasoftarrecadanet.com.br', operationCase: 'pascal' },
  request: 'strings',
  response: 'outputXML',
  operations: ['GerarNfse', 'ConsultarNfsePorRps'],
  signature: { rps: true, lote: false, cancel: false },
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 1, rpsPerLote: 1 },
  composeNfse: composeMegaSoftNfse,
};
