import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLICA_PROFILE } from '../../src/sandbox/abrasf-v1/publica.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { startProviderSandbox } from './support.ts';
import type { ConformanceEnvironment } from './suite.ts';
import { conformanceSandboxOptions, describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * Publica (its extended ABRASF 1.00 layout in `http://www.publica.inf.br`, `<Op><XML>` in CDATA, the lote, the
 * consultations and the cancellation signed, no client certificate) against its sandbox, in Joinville/SC (4209102), a
 * Simples Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the
 * provider's schema. The business rejection: a lote whose prestador is not the signer (E157, refused at reception).
 */
const { project } = describeAbrasfV1Conformance({
  engine: 'abrasf-v1:publica',
  project: { codigoMunicipio: '4209102' },
  slug: PUBLICA_PROFILE.slug,
  service: (options) => createAbrasfV1Service(PUBLICA_PROFILE, options),
});

describe('Publica: the consultations are signed (the schema requires their Signature)', () => {
  let env: ConformanceEnvironment;
  let agent: Agent;
  beforeAll(async () => {
    env = await startProviderSandbox({
      slug: PUBLICA_PROFILE.slug,
      project,
      service: (deps) => createAbrasfV1Service(PUBLICA_PROFILE, conformanceSandboxOptions(deps)),
    });
    agent = new Agent({ connect: { ca: env.caPem } });
  });
  afterAll(async () => {
    await agent.close();
    await env.close();
  });

  it('answers an unsigned ConsultarSituacaoLoteRps with E160, in its schema, in <return>', async () => {
    const message =
      '<ConsultarSituacaoLoteRpsEnvio xmlns="http://www.publica.inf.br"><Prestador><Cnpj>' +
      project.cnpj +
      '</Cnpj><InscricaoMunicipal>123456</InscricaoMunicipal></Prestador><Protocolo>1</Protocolo></ConsultarSituacaoLoteRpsEnvio>';
    const body =
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>' +
      '<ns2:ConsultarSituacaoLoteRps xmlns:ns2="http://service.nfse.integracao.ws.publica/">' +
      `<XML><![CDATA[${message}]]></XML></ns2:ConsultarSituacaoLoteRps></s:Body></s:Envelope>`;
    const answer = await request(env.endpoints.url('emit', 2, project.codigoMunicipio), {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
      body,
    });
    const text = await answer.body.text();
    expect(answer.statusCode).toBe(200);
    expect(text).toContain('<return>');
    expect(text).toContain('&lt;t:Codigo&gt;E160&lt;/t:Codigo&gt;');
  });
});
