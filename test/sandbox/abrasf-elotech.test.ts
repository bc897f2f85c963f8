import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildLote } from '../../src/engines/abrasf-v2/messages.ts';
import { ELOTECH_CONFIG } from '../../src/engines/abrasf-v2/providers/elotech.ts';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/define.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { ELOTECH_PROFILE } from '../../src/sandbox/abrasf-v2/profiles.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The generic ABRASF sandbox with the EloTech profile on raw requests: the Envio as the SOAP body and the Resposta
 * as the answer's body; IdentificacaoRequerente (`Homologa` must name the endpoint's environment: E179); no
 * GerarNfse; an unsigned NFS-e valid against EloTech's XSD with its ChaveAcesso; a cancellation with another
 * ChaveAcesso (E78); ConsultarLoteRps of an unknown NumeroLote (Situacao 1, E87).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4110706',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '4455',
  cnae: '6201501',
});
const NS = 'http://shad.elotech.com.br/schemas/iss/nfse_v2_03.xsd';
const family = defineAbrasfProvider(ELOTECH_CONFIG);
let numbers = 700_000 + (Date.now() % 100_000);
let env: Awaited<ReturnType<typeof startAbrasfSandbox>>;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(ELOTECH_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

const context = (ambiente: 1 | 2) =>
  ({ ambiente, credentials: { municipalPassword: 'senha-portal' } }) as unknown as SendContext;

function lote(ambiente: 1 | 2 = 2): string {
  const rps = family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  const xml = buildLote(ELOTECH_CONFIG, 'EnviarLoteRpsSincronoEnvio', rps.xml).xml;
  return ELOTECH_CONFIG.hooks!.message!('emitSyncBatch', xml, context(ambiente));
}

async function call(body: string): Promise<{ status: number; body: string }> {
  const answer = await http.send(null, 'POST', `${env.url}/municipal/abrasf-elotech/producaorestrita`, {
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body: `<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  return { status: answer.status, body: answer.body };
}

const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);

describe('the generic ABRASF 2.0x sandbox (EloTech profile)', () => {
  it('answers the synchronous lote in the body with an unsigned NFS-e valid against its XSD, with a ChaveAcesso', async () => {
    const res = await call(lote());
    expect(res.body).toMatch(/<soap:Body><EnviarLoteRpsSincronoResposta xmlns="http:\/\/shad\.elotech/);
    expect(res.body).not.toContain('<Protocolo>');
    expect(res.body).not.toContain('Signature');
    const comp = /<CompNfse[\s\S]*<\/CompNfse>/.exec(res.body)![0];
    expect(validateXml('abrasf203Elotech', comp)).toEqual({ ok: true });
    expect(comp).toMatch(/<ChaveAcesso>[0-9a-f]{32}<\/ChaveAcesso>/);
  });

  it('refuses a requerente whose Homologa names the other environment (E179), and has no GerarNfse', async () => {
    expect(codes((await call(lote(1))).body)).toEqual(['E179']);
    const gerar = await call(`<GerarNfseEnvio xmlns="${NS}"/>`);
    expect(gerar.status).toBe(500);
    expect(gerar.body).toContain('faultstring');
  });

  it('refuses a cancellation with another ChaveAcesso (E78) and an unknown NumeroLote (Situacao 1, E87)', async () => {
    const issued = await call(lote());
    const numero = /<InfNfse><Numero>(\d+)</.exec(issued.body)![1];
    const who = `<IdentificacaoRequerente><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>4455</InscricaoMunicipal><Senha>senha-portal</Senha><Homologa>true</Homologa></IdentificacaoRequerente>`;
    const cancel = await call(
      `<CancelarNfseEnvio xmlns="${NS}">${who}<Pedido><InfPedidoCancelamento><IdentificacaoNfse><Numero>${numero}</Numero>` +
        `<CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>4455</InscricaoMunicipal><CodigoMunicipio>4110706</CodigoMunicipio>` +
        `</IdentificacaoNfse><ChaveAcesso>${'0'.repeat(32)}</ChaveAcesso><CodigoCancelamento>1</CodigoCancelamento></InfPedidoCancelamento></Pedido></CancelarNfseEnvio>`,
    );
    expect(codes(cancel.body)).toEqual(['E78']);
    const poll = await call(
      `<ConsultarLoteRpsEnvio xmlns="${NS}">${who}<NumeroLote>999999999</NumeroLote></ConsultarLoteRpsEnvio>`,
    );
    expect(poll.body).toContain('<Situacao>1</Situacao>');
    expect(codes(poll.body)).toEqual(['E87']);
  });
});
