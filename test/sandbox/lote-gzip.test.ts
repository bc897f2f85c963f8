import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { cittaFamily } from '../../src/engines/dps-provider/citta.ts';
import { pronimFamily } from '../../src/engines/dps-provider/pronim.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import type { FamilyDefinition } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { CITTA_PROFILE, PRONIM_PROFILE } from '../../src/sandbox/lote-gzip/profiles.ts';
import { createLoteGzipService } from '../../src/sandbox/lote-gzip/service.ts';
import { withoutSignatures } from '../../src/xml/read.ts';
import { signXml } from '../../src/xml/sign.ts';
import { gunzipBase64, gzipBase64 } from '../../src/xml/transport-encoding.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';

/**
 * The `LoteXmlGZipB64` sandbox (Pronim and Citta) at the wire: mutual TLS, the provider's key spelling, the official
 * XSD, the signature on the element each provider signs, the Citta wrapper's provisional identification, the
 * transmitter matched to the emitter, no adherence rule, and the consultations of what it issued.
 */

const project: ProjectFiscalProfile = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3102308',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const casca = { ...project, codigoMunicipio: '4304903' };

let dir: string;
let server: SandboxServer;
let certificate: A1Certificate;
let stranger: A1Certificate;
let agent: Agent;
let strangerAgent: Agent;
let anonymous: Agent;
let numbers = 1000;

function certificateFor(cnpj: string): A1Certificate {
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj, name: 'EMPRESA EXEMPLO LTDA', password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  return read.value;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-lote-gzip-'));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  certificate = certificateFor(project.cnpj);
  stranger = certificateFor('11444777000161');
  const deps = { signer: identity.signer, now: () => new Date(), logger: { info() {}, warn() {} }, dataDir: dir };
  server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [createLoteGzipService(PRONIM_PROFILE, deps), createLoteGzipService(CITTA_PROFILE, deps)],
  });
  const tls = (c: A1Certificate | null) =>
    new Agent({ connect: { ca: identity.caPem, ...(c ? { key: c.keyPem, cert: c.certPem } : {}) } });
  agent = tls(certificate);
  strangerAgent = tls(stranger);
  anonymous = tls(null);
});
afterAll(async () => {
  await Promise.all([agent?.close(), strangerAgent?.close(), anonymous?.close()]);
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A signed declaration of a family, as its engine prepares it. */
function signed(family: FamilyDefinition, profile = project): { id: string; xml: string } {
  const http = new GovernmentHttpClient({ connectMs: 1000, responseMs: 1000 }, null);
  const engine = createEngine(family, {
    http,
    endpoints: { url: () => 'https://unused.invalid' },
    signatureAlgorithm: 'rsa-sha256',
    validateBeforeSend: true,
  });
  const checked = checkInvoiceRequest(invoiceBody() as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  const prepared = engine.prepare({
    project: profile,
    invoice: checked.value,
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate,
  });
  if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
  return prepared.value;
}

async function call(
  path: string,
  options: { body?: unknown; dispatcher?: Agent } = {},
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers
): Promise<{ status: number; body: any }> {
  const res = await request(`${server.url}${path}`, {
    method: options.body === undefined ? 'GET' : 'POST',
    dispatcher: options.dispatcher ?? agent,
    headers: { 'content-type': 'application/json' },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: res.statusCode, body: await res.body.json() };
}

const PRONIM = '/municipal/pronim/producaorestrita';
const CITTA = '/municipal/citta/producaorestrita';

describe('the Pronim sandbox', () => {
  it('issues a national-style NFS-e for a signed DPS from a non-adherent city, and finds it by DPS and by key', async () => {
    const dps = signed(pronimFamily);
    const res = await call(`${PRONIM}/EnviarSincrono`, { body: { loteXmlGZipB64: [gzipBase64(dps.xml)] } });
    expect(res.status).toBe(200);
    const [item] = res.body.lote;
    expect(item.erros).toEqual([]);
    expect(item.id).toBe(dps.id);
    expect(item.chaveAcesso).toMatch(/^31023081\d{42}$/);
    expect(res.body.dataHoraProcessamento).toBeTruthy();
    expect(gunzipBase64(item.xmlGZipB64)).toContain(`Id="NFS${item.chaveAcesso}"`);

    const nDPS = Number(dps.id.slice(30));
    const byDps = await call(`${PRONIM}/ConsultarDPS/${project.cnpj}/1/${nDPS}`);
    expect(byDps.body).toMatchObject({ total: 1, notas: [{ chave: item.chaveAcesso, situacao: 'EMITIDA' }] });
    const byKey = await call(`${PRONIM}/ConsultarNFSe/${item.chaveAcesso}`);
    expect(byKey.body.total).toBe(1);
    expect((await call(`${PRONIM}/ConsultarNFSe/${item.chaveAcesso}`, { dispatcher: strangerAgent })).body.total).toBe(
      0,
    );
    expect((await call(`${PRONIM}/ConsultarEventos/${item.chaveAcesso}`)).status).toBe(404);
  });

  it('takes only its own key spelling, and refuses without a client certificate', async () => {
    const dps = signed(pronimFamily);
    const wrongKey = await call(`${PRONIM}/EnviarSincrono`, { body: { LoteXmlGZipB64: [gzipBase64(dps.xml)] } });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.erros[0].Codigo).toBe('E1225');
    const noCert = await call(`${PRONIM}/EnviarSincrono`, {
      body: { loteXmlGZipB64: [gzipBase64(dps.xml)] },
      dispatcher: anonymous,
    });
    expect(noCert.status).toBe(403);
    expect(noCert.body.erros[0].Codigo).toBe('E1200');
  });

  it('refuses a tampered signature, an XSD-invalid DPS and a transmitter that is not the emitter, per item', async () => {
    const dps = signed(pronimFamily);
    const tampered = dps.xml.replace('<vServ>1500.50</vServ>', '<vServ>1.00</vServ>');
    expect(tampered).not.toBe(dps.xml);
    const invalid = dps.xml.replace(/<cLocEmi>/, '<cLocEmiX>').replace(/<\/cLocEmi>/, '</cLocEmiX>');
    const res = await call(`${PRONIM}/EnviarSincrono`, {
      body: { loteXmlGZipB64: [gzipBase64(tampered), gzipBase64(invalid)] },
    });
    expect(res.status).toBe(200);
    expect(res.body.lote.map((i: { erros: { Codigo: string }[] }) => i.erros[0]?.Codigo)).toEqual(['E0714', 'E1235']);
    const other = await call(`${PRONIM}/EnviarSincrono`, {
      body: { loteXmlGZipB64: [gzipBase64(dps.xml)] },
      dispatcher: strangerAgent,
    });
    expect(other.body.lote[0].erros[0].Codigo).toBe('E1200');
  });
});

describe('the Citta sandbox', () => {
  it('issues from a taxpayer-built NFSe signed on infNFSe, replacing its provisional number and key', async () => {
    const wrapper = signed(cittaFamily, casca);
    const res = await call(CITTA, { body: { LoteXmlGZipB64: [gzipBase64(wrapper.xml)] } });
    expect(res.status).toBe(200);
    const [item] = res.body.Lote;
    expect(item.Erros).toEqual([]);
    expect(item.ChaveAcesso).toMatch(/^43049031\d{42}$/);
    expect(wrapper.xml).not.toContain(item.ChaveAcesso);
    const nfse = gunzipBase64(item.xmlGZipB64);
    expect(nfse).toContain(`Id="NFS${item.ChaveAcesso}"`);
    const nDPS = Number(wrapper.id.slice(30));
    const found = await call(`${CITTA}/${nDPS}`);
    expect(found.body).toMatchObject({ status: 'EMITIDA', ChaveAcesso: item.ChaveAcesso });
    expect((await call(`${CITTA}/${nDPS + 100_000}`)).status).toBe(404);
  });

  it('accepts only the provisional identification of the wrapper, its own key spelling and a signed infNFSe', async () => {
    const wrapper = signed(cittaFamily, casca);
    const number = /<nNFSe>(\d+)<\/nNFSe>/.exec(wrapper.xml)![1]!;
    const renumbered = wrapper.xml.replace(`<nNFSe>${number}</nNFSe>`, `<nNFSe>${Number(number) + 1}</nNFSe>`);
    const res = await call(CITTA, { body: { LoteXmlGZipB64: [gzipBase64(renumbered)] } });
    // the number is inside the signed infNFSe: changing it breaks the signature first
    expect(res.body.Lote[0].Erros[0].Codigo).toBe('E0714');
    // signed again by the taxpayer: the provisional identification is then what is refused
    const resigned = signXml(withoutSignatures(renumbered), {
      elementName: 'infNFSe',
      key: { privateKey: certificate.privateKey, certificatePem: certificate.certPem },
      algorithm: 'rsa-sha256',
    });
    const wrong = await call(CITTA, { body: { LoteXmlGZipB64: [gzipBase64(resigned)] } });
    expect(wrong.body.Lote[0].Erros[0].Codigo).toBe('E0004');
    const camel = await call(CITTA, { body: { loteXmlGZipB64: [gzipBase64(wrapper.xml)] } });
    expect(camel.status).toBe(400);
    const bareDps = signed(pronimFamily, casca);
    const bare = await call(CITTA, { body: { LoteXmlGZipB64: [gzipBase64(bareDps.xml)] } });
    expect(bare.body.Lote[0].Erros[0].Codigo).toBe('E1242');
  });
});
