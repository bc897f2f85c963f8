import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { abaseDefinition } from '../../src/engines/dps-provider/abase.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { createAbaseService } from '../../src/sandbox/raw-xml/abase.ts';
import { preparedDocument, startRawXmlSandbox } from '../conformance/raw-xml-env.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The ABase sandbox on the wire: Bearer and client certificate both required, application/xml only, the official
 * XSD and the signature checked at reception (Erros/Erro with national codes, a bare <Erro> for auth), and a lot
 * held EM_PROCESSAMENTO for the configured time before it reports the NFS-e.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4317509',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const TOKEN = 'token-do-teste';

let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
let client: Agent;
let anonymous: Agent;
let base: string;
let number = 7000;

function signedDps(): { id: string; xml: string } {
  const http = new GovernmentHttpClient({ connectMs: 1000, responseMs: 1000 }, null);
  const engine = createEngine(abaseDefinition, {
    http,
    endpoints: { url: () => base },
    signatureAlgorithm: 'rsa-sha256',
    validateBeforeSend: true,
  });
  return preparedDocument(engine, { project, certificate: env.certificate, number: ++number });
}

async function call(
  path: string,
  options: { method?: string; body?: string; headers?: Record<string, string>; agent?: Agent } = {},
) {
  const res = await request(`${base}${path}`, {
    method: (options.method ?? 'GET') as 'GET',
    dispatcher: options.agent ?? client,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/xml', ...options.headers },
    ...(options.body !== undefined ? { body: options.body } : {}),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

beforeAll(async () => {
  env = await startRawXmlSandbox({
    project,
    slug: 'abase',
    create: (deps) => createAbaseService(deps),
    settings: { path: '/__sandbox/abase/settings', body: { pendingMs: 2_000, tokens: [TOKEN] } },
  });
  base = `${env.url}/municipal/abase/producaorestrita`;
  client = new Agent({
    connect: { key: env.certificate.keyPem, cert: env.certificate.certPem, ca: env.caPem },
  });
  anonymous = new Agent({ connect: { ca: env.caPem } });
});
afterAll(async () => {
  await client?.close();
  await anonymous?.close();
  await env?.close();
});

describe('ABase sandbox', () => {
  it('holds a received DPS EM_PROCESSAMENTO, then reports it processed with the NFS-e', async () => {
    const dps = signedDps();
    const sent = await call('/recepcionardps', { method: 'POST', body: dps.xml });
    expect(sent.status, sent.text).toBe(200);
    const protocol = /<Protocolo>([^<]+)<\/Protocolo>/.exec(sent.text)?.[1];
    expect(protocol).toMatch(/^[0-9A-F]{32}$/);
    expect(sent.text).toContain('<DataHoraRecebimento>');

    const early = await call(`/consultarlotedps/${protocol}`);
    expect(early.text).toContain('<Situacao>EM_PROCESSAMENTO</Situacao>');
    expect(early.text).not.toContain('<NFSe');
    // processed once the hold has passed (polled, so a loaded machine does not make it flaky)
    let late = await call(`/consultarlotedps/${protocol}`);
    for (let i = 0; i < 50 && late.text.includes('EM_PROCESSAMENTO'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      late = await call(`/consultarlotedps/${protocol}`);
    }
    expect(late.text).toContain('<StatusProcessamento>PROCESSADO</StatusProcessamento>');
    expect(late.text).toMatch(/<ChaveAcesso>\d{50}<\/ChaveAcesso><NFSe xmlns="http:\/\/www.sped.fazenda.gov.br\/nfse"/);

    const byNumber = await call(`/consultarnfsedps/${String(number)}`);
    expect(byNumber.status).toBe(200);
    expect(byNumber.text).toContain(dps.id);
    expect((await call('/consultarnfsedps/999999999')).status).toBe(404);

    const again = await call('/recepcionardps', { method: 'POST', body: dps.xml });
    expect(again.status).toBe(400);
    expect(again.text).toContain('<Codigo>E0014</Codigo>');
  });

  it('refuses a wrong or missing Bearer with a bare <Erro>, and a connection without certificate', async () => {
    const wrong = await call('/consultarnfsedps/1', { headers: { authorization: 'Bearer outro' } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toMatch(/<Erro>[^<]+<\/Erro>$/);
    const basic = await call('/consultarnfsedps/1', { headers: { authorization: 'Basic dTpw' } });
    expect(basic.status).toBe(401);
    const noCert = await call('/consultarnfsedps/1', { agent: anonymous });
    expect(noCert.status).toBe(403);
    expect(noCert.text).toContain('<Erros><Erro><Codigo>E1200</Codigo>');
  });

  it('accepts only application/xml and checks the schema and the signature', async () => {
    const dps = signedDps();
    const json = await call('/recepcionardps', {
      method: 'POST',
      body: dps.xml,
      headers: { 'content-type': 'text/plain' },
    });
    expect(json.status).toBe(415);
    const tampered = await call('/recepcionardps', {
      method: 'POST',
      body: dps.xml.replace('<xDescServ>', '<xDescServ>X'),
    });
    expect(tampered.status).toBe(400);
    expect(tampered.text).toContain('<Codigo>E0714</Codigo>');
    const invalid = await call('/recepcionardps', {
      method: 'POST',
      body: dps.xml.replace(/<serie>/, '<seriee>').replace(/<\/serie>/, '</seriee>'),
    });
    expect(invalid.status).toBe(400);
    expect(invalid.text).toContain('<Codigo>E1235</Codigo>');
  });

  it('injects faults: a 5xx in the Erros shape', async () => {
    await env.setFaults({ errorRate: 1 });
    try {
      const res = await call('/consultarnfsedps/1');
      expect(res.status).toBe(500);
      expect(res.text).toContain('<Erros><Erro><Codigo>500</Codigo>');
    } finally {
      await env.setFaults({});
    }
  });
});
