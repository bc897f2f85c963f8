import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { modernizacaoPublicaDefinition } from '../../src/engines/dps-provider/modernizacao-publica.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { createModernizacaoPublicaService } from '../../src/sandbox/raw-xml/modernizacao-publica.ts';
import { preparedDocument, startRawXmlSandbox } from '../conformance/raw-xml-env.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The Modernização Pública sandbox on the wire: Basic and client certificate both required, `?sys=NFE`,
 * application/xml only, the XSD and the signature checked, `{"sucesso":"false","mensagem":"<code> - …"}` on error and
 * the documented success shape with the NFS-e.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3300456',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const BASIC = `Basic ${Buffer.from('ws-usuario:ws-senha').toString('base64')}`;

let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
let client: Agent;
let anonymous: Agent;
let base: string;
let number = 9000;

function signedDps(): { id: string; xml: string } {
  const engine = createEngine(modernizacaoPublicaDefinition, {
    http: new GovernmentHttpClient({ connectMs: 1000, responseMs: 1000 }, null),
    endpoints: { url: () => base },
    signatureAlgorithm: 'rsa-sha256',
    validateBeforeSend: true,
  });
  return preparedDocument(engine, { project, certificate: env.certificate, number: ++number });
}

async function post(path: string, body: string, headers: Record<string, string> = {}, agent?: Agent) {
  const res = await request(`${base}${path}`, {
    method: 'POST',
    dispatcher: agent ?? client,
    headers: { authorization: BASIC, 'content-type': 'application/xml', ...headers },
    body,
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: JSON.parse(text) as Record<string, string> };
}

beforeAll(async () => {
  env = await startRawXmlSandbox({
    project,
    slug: 'modernizacaopublica',
    create: (deps) => createModernizacaoPublicaService(deps),
    settings: {
      path: '/__sandbox/modernizacaopublica/settings',
      body: { users: [{ user: 'ws-usuario', password: 'ws-senha' }] },
    },
  });
  base = `${env.url}/municipal/modernizacaopublica/producaorestrita`;
  client = new Agent({ connect: { key: env.certificate.keyPem, cert: env.certificate.certPem, ca: env.caPem } });
  anonymous = new Agent({ connect: { ca: env.caPem } });
});
afterAll(async () => {
  await client?.close();
  await anonymous?.close();
  await env?.close();
});

describe('Modernização Pública sandbox', () => {
  it('issues a raw signed DPS and answers the documented success shape; a resend is E0014', async () => {
    const dps = signedDps();
    const res = await post('/ReceberDPS.rule?sys=NFE', dps.xml);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ sucesso: 'true', chaveAcesso: expect.stringMatching(/^\d{50}$/) });
    expect(res.body.nfseXmlGZipB64).toBeTruthy();
    const again = await post('/ReceberDPS.rule?sys=NFE', dps.xml);
    expect(again.body.sucesso).toBe('false');
    expect(again.body.mensagem).toMatch(/^E0014 - /);
  });

  it('refuses bad Basic credentials, no certificate, no sys=NFE, another content type, a bad signature', async () => {
    const dps = signedDps();
    const wrong = await post('/ReceberDPS.rule?sys=NFE', dps.xml, {
      authorization: `Basic ${Buffer.from('ws-usuario:errada').toString('base64')}`,
    });
    expect(wrong).toMatchObject({ status: 401, body: { sucesso: 'false' } });
    const bearer = await post('/ReceberDPS.rule?sys=NFE', dps.xml, { authorization: 'Bearer x' });
    expect(bearer.status).toBe(401);
    expect((await post('/ReceberDPS.rule?sys=NFE', dps.xml, {}, anonymous)).status).toBe(403);
    expect((await post('/ReceberDPS.rule', dps.xml)).status).toBe(400);
    expect((await post('/ReceberDPS.rule?sys=NFE', dps.xml, { 'content-type': 'text/xml' })).status).toBe(415);
    const tampered = await post('/ReceberDPS.rule?sys=NFE', dps.xml.replace('<xDescServ>', '<xDescServ>X'));
    expect(tampered.body.mensagem).toMatch(/^E0714 - /);
  });
});
