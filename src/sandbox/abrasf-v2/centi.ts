import type { MunicipalSandbox } from '../municipal.ts';
import { escapeXml } from '../kit/xml-dom.ts';
import { signEnveloped } from '../kit/xml-signature.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { ABRASF_SIGNATURE_PROFILE, type ComposeNfseOptions } from './rules.ts';
import { createAbrasfService } from './service.ts';

/**
 * Centi (ABRASF 2.02 in `http://www.centi.com.br/files/nfse.xsd`): its REST API takes
 * `{"xml": <message>, "usuario": …, "senha": …}` posted as JSON (ACBr's TACBrNFSeXWebserviceRest2, the public
 * OpenAC.Net and VB.NET clients) and answers with the bare ABRASF message. The messages are validated against Centi's
 * schema (OpenAC.Net.NFSe `Schemas/Centi/nfse.xsd`); the RPS must be signed on its inner Rps@Id (the schema's 2.00
 * shape, Signature required); user and password are required (E179: any non-empty pair, Centi publishes no test
 * login); the TLS client certificate is required, as ACBr presents it (E182). GerarNfse and ConsultarNfsePorRps are
 * served; the other operations are refused as unknown messages (the cancellation is not simulated: its public
 * descriptions disagree, see the engine's providers/centi.ts).
 * The NFS-e is Centi's tcNfse: `versao` 2.02, InfNfse with Numero, CodigoVerificacao, DataEmissao and ValoresNfse
 * (BaseCalculo, Aliquota, ValorIss, ValorLiquidoNfse), without the declaration ("NAO SERA RETORNADO"), signed.
 */
export const CENTI_NS = 'http://www.centi.com.br/files/nfse.xsd';

export function composeCentiNfse(options: ComposeNfseOptions): string {
  const { rps } = options;
  const money = (value: number) => value.toFixed(2);
  const aliquota = Number(rps.aliquota ?? 0);
  const valorIss = Math.round(rps.valorServicos * aliquota) / 100;
  const el = (name: string, value: string) => `<${name}>${escapeXml(value)}</${name}>`;
  const unsigned =
    `<Nfse xmlns="${CENTI_NS}" versao="2.02"><InfNfse Id="NFSE${rps.prestador}N${options.numero}">` +
    el('Numero', options.numero) +
    el('CodigoVerificacao', options.codigoVerificacao) +
    el('DataEmissao', options.dataEmissao) +
    `<ValoresNfse>${el('BaseCalculo', money(rps.valorServicos))}${el('Aliquota', aliquota.toFixed(2))}` +
    `${el('ValorIss', money(valorIss))}${el('ValorLiquidoNfse', money(rps.valorServicos - rps.retencoes))}</ValoresNfse>` +
    '</InfNfse></Nfse>';
  return signEnveloped(
    unsigned,
    { rootName: 'Nfse', elementName: 'InfNfse' },
    options.signer,
    ABRASF_SIGNATURE_PROFILE,
  );
}

export const CENTI_PROFILE: AbrasfSandboxProfile = {
  provider: 'Centi',
  engine: 'abrasf-v2:centi',
  slug: 'abrasf-centi',
  family: 'abrasf-v2-centi',
  version: '2.02',
  schema: 'abrasf202Centi',
  dataNamespace: CENTI_NS,
  soap: { namespace: '', operationCase: 'pascal' },
  request: 'json',
  response: 'bare',
  operations: ['GerarNfse', 'ConsultarNfsePorRps'],
  signature: { rps: true, lote: false, cancel: false },
  clientCertificate: true,
  bodyCredentials: true,
  limits: { queryPage: 1, rpsPerLote: 1 },
  composeNfse: composeCentiNfse,
};

export const centiSandbox: MunicipalSandbox = {
  engine: CENTI_PROFILE.engine,
  slug: CENTI_PROFILE.slug,
  create: (deps) => createAbrasfService(CENTI_PROFILE, deps),
};
