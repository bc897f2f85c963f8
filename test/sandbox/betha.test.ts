import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../../src/domain/invoice-request.ts';
import { bethaFamily } from '../../src/engines/dps-provider/betha.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { createBethaService, WAITING_STATUS } from '../../src/sandbox/betha/service.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';

/** The Betha sandbox's own rules, over HTTPS with a client certificate, with a hold of 400 ms. */
const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '1200013', regimeTributario: '3', aliquotaSimples: 6 });
const SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';
const NS = 'http://www.betha.com.br/e-nota-dps';

let dir: string;
let server: SandboxServer;
let certificate: A1Certificate;
let agent: Agent;
let other: Agent;
let http: GovernmentHttpClient;
let number = 1000;
const base = () => `${server.url}/municipal/betha/producaorestrita`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-betha-'));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj: project.cnpj, name: 'P', password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  const stranger = createA1Certificate({ cnpj: '45723174000110', name: 'S', password: 'x', issuer: ca });
  const strangerRead = readPkcs12(stranger.pfx, stranger.password);
  if (!read.ok || !strangerRead.ok) throw new Error('certificates');
  certificate = read.value;
  const service = createBethaService({
    signer: identity.signer,
    now: () => new Date(),
    logger: { info: () => {}, warn: () => {} },
    dataDir: null,
    holdMs: 2_000,
  });
  server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [service],
  });
  agent = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
  other = new Agent({
    connect: { key: strangerRead.value.keyPem, cert: strangerRead.value.certPem, ca: identity.caPem },
  });
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, identity.caPem);
});
afterAll(async () => {
  await agent?.close();
  await other?.close();
  await http?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

function signedDps(): { id: string; xml: string } {
  const engine = createEngine(bethaFamily, {
    http,
    endpoints: { url: base },
    signatureAlgorithm: 'rsa-sha256',
    validateBeforeSend: true,
  });
  const checked = checkInvoiceRequest(invoiceBody() as InvoiceRequest, project);
  if (!checked.ok) throw new Error('invoice');
  const prepared = engine.prepare({
    project,
    invoice: checked.value,
    serie: project.serieNfse,
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate,
  });
  if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
  return prepared.value;
}

async function soap(body: string, dispatcher = agent): Promise<string> {
  const res = await request(base(), {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body: `<soapenv:Envelope xmlns:soapenv="${SOAP}" xmlns="${NS}"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`,
  });
  return res.body.text();
}

const tag = (xml: string, name: string) => new RegExp(`<ns2:${name}>([^<]*)</ns2:${name}>`).exec(xml)?.[1] ?? null;

const status = (protocolo: string) =>
  soap(
    `<ConsultarStatusDpsEnvio><tpAmb>2</tpAmb><codigoIbge>1200013</codigoIbge><cpfCnpjPrestador>${project.cnpj}</cpfCnpjPrestador><protocolo>${protocolo}</protocolo><tipoIntegracao>EMISSAO</tipoIntegracao></ConsultarStatusDpsEnvio>`,
  );

describe('Betha sandbox', () => {
  it('answers a protocol in ns2:, holds the DPS "Aguardando validação do ambiente nacional", then issues it', async () => {
    const dps = signedDps();
    const received = await soap(`<RecepcionarDpsEnvio>${dps.xml}</RecepcionarDpsEnvio>`);
    expect(received).toContain('<ns2:RecepcionarDpsResposta');
    expect(tag(received, 'status')).toBe(WAITING_STATUS);
    const protocolo = tag(received, 'protocolo')!;
    expect(protocolo).toMatch(/^\d+$/);

    const waiting = await status(protocolo);
    expect(waiting).toContain('<ns2:ConsultarStatusDpsEmissaoResposta');
    expect(tag(waiting, 'statusProcessamento')).toBe(WAITING_STATUS);

    // processed once the hold has passed (polled, so a loaded machine does not make it flaky)
    let done = await status(protocolo);
    for (let i = 0; i < 50 && tag(done, 'statusProcessamento') === WAITING_STATUS; i++) {
      await new Promise((r) => setTimeout(r, 200));
      done = await status(protocolo);
    }
    expect(tag(done, 'statusProcessamento')).toBe('Processado com sucesso');
    expect(tag(done, 'chaveAcesso')).toMatch(/^\d{50}$/);
    expect(tag(done, 'idDps')).toBe(dps.id);
    expect(tag(done, 'numeroNotaFiscal')).toMatch(/^\d+$/);

    const again = await soap(`<RecepcionarDpsEnvio>${dps.xml}</RecepcionarDpsEnvio>`);
    expect(tag(again, 'codigo')).toBe('E0014');
  });

  it("refuses an uppercase Id on infDPS with Betha's message", async () => {
    const dps = signedDps();
    const answer = await soap(
      `<RecepcionarDpsEnvio>${dps.xml.replace('<infDPS id=', '<infDPS Id=')}</RecepcionarDpsEnvio>`,
    );
    expect(tag(answer, 'codigo')).toBe('E001');
    expect(tag(answer, 'mensagem')).toBe("O atributo 'Id' não pode aparecer no elemento 'infDPS'");
  });

  it('refuses another versao, a schema error after mapping to the national layout, and a tampered signature', async () => {
    const dps = signedDps();
    const version = await soap(
      `<RecepcionarDpsEnvio>${dps.xml.replace('versao="1.01"', 'versao="1.0"')}</RecepcionarDpsEnvio>`,
    );
    expect(tag(version, 'codigo')).toBe('E001');
    const schema = await soap(
      `<RecepcionarDpsEnvio>${dps.xml.replace(/<tpAmb>2<\/tpAmb>/, '<tpAmb>9</tpAmb>')}</RecepcionarDpsEnvio>`,
    );
    expect(tag(schema, 'codigo')).toBe('E001');
    const tampered = await soap(
      `<RecepcionarDpsEnvio>${dps.xml.replace(/<xDescServ>/, '<xDescServ>X')}</RecepcionarDpsEnvio>`,
    );
    expect(tag(tampered, 'codigo')).toBe('E0714');
  });

  it("refuses a client certificate that is not the DPS provider's", async () => {
    const answer = await soap(`<RecepcionarDpsEnvio>${signedDps().xml}</RecepcionarDpsEnvio>`, other);
    expect(tag(answer, 'codigo')).toBe('E1200');
    expect(tag(answer, 'protocolo')).toBeNull();
  });
});
