import { spawnSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { DOMParser } from '@xmldom/xmldom';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SignedXml } from 'xml-crypto';
import {
  type CertificateAuthority,
  createA1Certificate,
  createCertificateAuthority,
} from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { provisionSandboxIdentity, type SandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SefinSandbox, startSefinSandbox } from '../../src/sandbox/sefin/server.ts';
import { buildCancellationRequest } from '../../src/engines/national/event-builder.ts';
import { type SignatureAlgorithm, signXml } from '../../src/xml/sign.ts';
import { gunzipBase64, gzipBase64 } from '../../src/xml/transport-encoding.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { exportPkcs12WithOpenssl } from '../support/openssl-pkcs12.ts';
import { hasTool } from '../support/tools.ts';

// ------------------------------------------------------------------------------------------------------------
// Fixtures: parties, certificates, DPS built from the official sample, signing with xml-crypto directly.
// ------------------------------------------------------------------------------------------------------------

const PROVIDER = '11222333000181';
const PROVIDER_BRANCH = '11222333000262';
const TAKER = '39847728000199';
const STRANGER = '45997418000153';
const RIO = '3304557';
const PASSWORD = 'senha';

/** The official sample DPS (shared/reference/national/samples/dps), whitespace between tags removed. */
const SAMPLE_DPS =
  '<DPS xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infDPS Id="{ID}"><tpAmb>{TPAMB}</tpAmb>' +
  '<dhEmi>{DHEMI}</dhEmi><verAplic>MXM.RTC-1.00</verAplic><serie>{SERIE}</serie><nDPS>{NDPS}</nDPS>' +
  '<dCompet>{DCOMPET}</dCompet><tpEmit>1</tpEmit><cLocEmi>3304557</cLocEmi><prest><CNPJ>{CNPJ}</CNPJ>' +
  '<fone>3132332300</fone><email>sau@mxm.com.br</email><regTrib><opSimpNac>3</opSimpNac><regApTribSN>3</regApTribSN>' +
  '<regEspTrib>0</regEspTrib></regTrib></prest><toma><CNPJ>39847728000199</CNPJ><xNome>MXM &amp; JETTAX</xNome>' +
  '<end><endNac><cMun>3303302</cMun><CEP>24020077</CEP></endNac><xLgr>AV RIO BRANCO</xLgr><nro>123</nro>' +
  '<xBairro>CENTRO</xBairro></end><fone>2132332300</fone><email>SAU@mxm.com.br</email></toma><serv><locPrest>' +
  '<cLocPrestacao>3304557</cLocPrestacao></locPrest><cServ><cTribNac>010101</cTribNac><cTribMun>001</cTribMun>' +
  '<xDescServ>Analise e desenvolvimento de sistemas (MXM)</xDescServ><cNBS>115021000</cNBS></cServ></serv>' +
  '<valores><vServPrest><vServ>10000.00</vServ></vServPrest><trib><tribMun><tribISSQN>1</tribISSQN>' +
  '<tpRetISSQN>1</tpRetISSQN></tribMun><tribFed><piscofins><CST>01</CST><vBCPisCofins>10000.00</vBCPisCofins>' +
  '<pAliqPis>0.00</pAliqPis><pAliqCofins>7.60</pAliqCofins><vPis>0.00</vPis><vCofins>760.00</vCofins>' +
  '<tpRetPisCofins>2</tpRetPisCofins></piscofins><vRetIRRF>150.00</vRetIRRF><vRetCSLL>465.00</vRetCSLL></tribFed>' +
  '<totTrib><vTotTrib><vTotTribFed>760.00</vTotTribFed><vTotTribEst>0.00</vTotTribEst><vTotTribMun>500.00' +
  '</vTotTribMun></vTotTrib></totTrib></trib></valores><IBSCBS><finNFSe>0</finNFSe><indFinal>1</indFinal>' +
  '<cIndOp>100301</cIndOp><indDest>0</indDest><valores><trib><gIBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib>' +
  '</gIBSCBS></trib></valores></IBSCBS></infDPS></DPS>';

interface DpsOptions {
  cnpj?: string;
  serie?: string;
  nDPS?: number;
  tpAmb?: 1 | 2;
  dhEmi?: string;
  dCompet?: string;
  id?: string;
  /** issuing municipality (default Rio de Janeiro, adherent to the national environment) */
  cLocEmi?: string;
  /** prest/regTrib/opSimpNac (default 3, ME/EPP) */
  opSimpNac?: '1' | '2' | '3';
}

let dpsCounter = 0;

/** `AAAA-MM-DDThh:mm:ss-03:00`, `offsetMs` from now. */
function brasilia(offsetMs = -60_000): string {
  return `${new Date(Date.now() + offsetMs - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`;
}

function buildDps(options: DpsOptions = {}): { xml: string; id: string; nDPS: number } {
  const cnpj = options.cnpj ?? PROVIDER;
  const serie = options.serie ?? '1';
  const nDPS = options.nDPS ?? 1000 + ++dpsCounter;
  const dhEmi = options.dhEmi ?? brasilia();
  const cLocEmi = options.cLocEmi ?? RIO;
  const id = options.id ?? `DPS${cLocEmi}2${cnpj}${serie.padStart(5, '0')}${String(nDPS).padStart(15, '0')}`;
  let xml = SAMPLE_DPS.replace('{ID}', id)
    .replace('{TPAMB}', String(options.tpAmb ?? 2))
    .replace('{DHEMI}', dhEmi)
    .replace('{SERIE}', serie)
    .replace('{NDPS}', String(nDPS))
    .replace('{DCOMPET}', options.dCompet ?? dhEmi.slice(0, 10))
    .replace('{CNPJ}', cnpj)
    .replace('<cLocEmi>3304557</cLocEmi>', `<cLocEmi>${cLocEmi}</cLocEmi>`);
  if (options.opSimpNac === '2') {
    // a MEI declares neither the Simples regime of ME/EPP nor federal taxes
    xml = xml
      .replace('<opSimpNac>3</opSimpNac><regApTribSN>3</regApTribSN>', '<opSimpNac>2</opSimpNac>')
      .replace(/<tribFed>.*<\/tribFed>/, '');
  } else if (options.opSimpNac) {
    xml = xml.replace(
      '<opSimpNac>3</opSimpNac><regApTribSN>3</regApTribSN>',
      `<opSimpNac>${options.opSimpNac}</opSimpNac>`,
    );
  }
  return { xml, id, nDPS };
}

/** Our signer (src/xml/sign.ts): RSA-SHA1 + C14N by default, as the manual prescribes. */
function signEnveloped(
  xml: string,
  element: string,
  cert: A1Certificate,
  algorithm: SignatureAlgorithm = 'rsa-sha1',
): string {
  return signXml(xml, {
    elementName: element,
    key: { privateKey: cert.privateKey, certificatePem: cert.certPem },
    algorithm,
  });
}

/** An independent signer (xml-crypto directly), so the sandbox is not only tested against our own signer. */
function signWithXmlCrypto(xml: string, element: string, cert: A1Certificate): string {
  const c14n = 'http://www.w3.org/2001/10/xml-exc-c14n#';
  const sig = new SignedXml({
    privateKey: cert.privateKey,
    publicCert: cert.certPem,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: c14n,
  });
  sig.addReference({
    xpath: `//*[local-name(.)='${element}']`,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', c14n],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sig.computeSignature(xml, { location: { reference: `//*[local-name(.)='${element}']`, action: 'after' } });
  return sig.getSignedXml();
}

/** The cancellation request of our event builder (src/engines/national/event-builder.ts). */
function cancellationRequest(chave: string, author: string, options: { tpAmb?: 1 | 2 } = {}): string {
  return buildCancellationRequest({
    chaveAcesso: chave,
    tpAmb: options.tpAmb ?? 2,
    author: { cnpj: author },
    motivo: 'Erro na emissão da nota de teste',
    cMotivo: 1,
    dhEvento: new Date(Date.now() - 60_000),
    verAplic: 'teste-1.0',
  }).xml;
}

/** Transport encoding of our service (src/xml/transport-encoding.ts); raw bytes for the non-UTF-8 case. */
const gz = (xml: string | Buffer) => (typeof xml === 'string' ? gzipBase64(xml) : gzipSync(xml).toString('base64'));
const gunz = gunzipBase64;

/** The 49-digit modulo 11 check digit, computed here independently of the sandbox. */
function expectedDv(first49: string): number {
  let sum = 0;
  for (let i = 0; i < 49; i++) sum += Number(first49[48 - i]) * (2 + (i % 8));
  const r = sum % 11;
  return r < 2 ? 0 : 11 - r;
}

function textOf(xml: string, path: string): string | undefined {
  let el: Element | null = new DOMParser().parseFromString(xml, 'text/xml').documentElement;
  for (const name of path.split('/')) {
    let next: Element | null = null;
    for (let n = el?.firstChild ?? null; n; n = n.nextSibling) {
      if (n.nodeType === 1 && (n as Element).localName === name) {
        next = n as Element;
        break;
      }
    }
    el = next;
    if (!el) return undefined;
  }
  return el?.textContent ?? undefined;
}

// ------------------------------------------------------------------------------------------------------------
// Sandbox and clients
// ------------------------------------------------------------------------------------------------------------

let dir: string;
let identity: SandboxIdentity;
let sandbox: SefinSandbox;
let testCa: CertificateAuthority;
let provider: A1Certificate;
let providerBranch: A1Certificate;
let taker: A1Certificate;
let stranger: A1Certificate;
const agents: Agent[] = [];

function readA1(files: { pfx: Buffer; password: string }): A1Certificate {
  const result = readPkcs12(files.pfx, files.password);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function agentFor(cert: A1Certificate | null): Agent {
  const agent = new Agent({
    connect: cert ? { key: cert.keyPem, cert: cert.certPem, ca: identity.caPem } : { ca: identity.caPem },
  });
  agents.push(agent);
  return agent;
}

let asProvider: Agent;
let asBranch: Agent;
let asTaker: Agent;
let asStranger: Agent;
let anonymous: Agent;

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON answers are inspected field by field
  body: any;
}

async function call(agent: Agent, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await request(`${sandbox.url}${path}`, {
    method: method as 'GET',
    dispatcher: agent,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : null };
}

const RESTRITA = '/producaorestrita/SefinNacional';
const PRODUCAO = '/producao/SefinNacional';

function postDps(agent: Agent, signedXml: string, base = RESTRITA): Promise<Answer> {
  return call(agent, 'POST', `${base}/nfse`, { dpsXmlGZipB64: gz(signedXml) });
}

async function issueOne(options: DpsOptions = {}): Promise<{ chave: string; id: string; nfse: string; dps: string }> {
  const dps = buildDps(options);
  const signed = signEnveloped(dps.xml, 'infDPS', provider);
  const answer = await postDps(asProvider, signed);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return { chave: answer.body.chaveAcesso, id: dps.id, nfse: gunz(answer.body.nfseXmlGZipB64), dps: signed };
}

function codesOf(answer: Answer): string[] {
  return (answer.body.erros ?? [answer.body.erro]).map((e: { codigo: string }) => e.codigo);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sefin-sandbox-'));
  identity = provisionSandboxIdentity(join(dir, 'identity'));
  testCa = createCertificateAuthority('AC Teste ICP-Brasil');
  const providerFiles = createA1Certificate({
    cnpj: PROVIDER,
    name: 'EMPRESA EXEMPLO LTDA',
    password: PASSWORD,
    issuer: testCa,
  });
  // The provider uses a legacy RC2 file, as many real A1 exports are, to exercise the whole path.
  provider = hasTool('openssl')
    ? readA1({
        pfx: exportPkcs12WithOpenssl({
          keyPem: providerFiles.keyPem,
          certPem: providerFiles.certPem,
          password: PASSWORD,
          legacy: true,
        }),
        password: PASSWORD,
      })
    : readA1(providerFiles);
  providerBranch = readA1(
    createA1Certificate({ cnpj: PROVIDER_BRANCH, name: 'EMPRESA FILIAL', password: PASSWORD, issuer: testCa }),
  );
  taker = readA1(createA1Certificate({ cnpj: TAKER, name: 'MXM JETTAX', password: PASSWORD, issuer: testCa }));
  stranger = readA1(createA1Certificate({ cnpj: STRANGER, name: 'OUTRA EMPRESA', password: PASSWORD, issuer: testCa }));
  sandbox = await startSefinSandbox({
    tls: identity.tls,
    signer: identity.signer,
    storeFile: join(dir, 'store.jsonl'),
    defaultIssRate: 5,
  });
  asProvider = agentFor(provider);
  asBranch = agentFor(providerBranch);
  asTaker = agentFor(taker);
  asStranger = agentFor(stranger);
  anonymous = agentFor(null);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => {})));
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => sandbox.setFaults({}));

// ------------------------------------------------------------------------------------------------------------

describe('sandbox identity', () => {
  it('creates the PEM files once, private, and reuses them', () => {
    const again = provisionSandboxIdentity(join(dir, 'identity'));
    expect(again.caPem).toBe(identity.caPem);
    expect(again.tls.certPem).toBe(identity.tls.certPem);
    expect(again.signer.certPem).toBe(identity.signer.certPem);
    for (const name of [
      'ca.key.pem',
      'ca.cert.pem',
      'tls.key.pem',
      'tls.cert.pem',
      'signer.key.pem',
      'signer.cert.pem',
    ]) {
      expect(statSync(join(dir, 'identity', name)).mode & 0o777, name).toBe(0o600);
    }
    expect(again.caFile).toBe(join(dir, 'identity', 'ca.cert.pem'));
  });
});

describe('POST /nfse with a valid DPS', () => {
  let issued: { chave: string; id: string; nfse: string; dps: string };
  let answer: Answer;

  beforeAll(async () => {
    const dps = buildDps();
    const signed = signEnveloped(dps.xml, 'infDPS', provider);
    expect(validateXml('DPS', signed)).toEqual({ ok: true });
    answer = await postDps(asProvider, signed);
    issued = { chave: answer.body.chaveAcesso, id: dps.id, nfse: gunz(answer.body.nfseXmlGZipB64 ?? ''), dps: signed };
  });

  it('answers 201 with the official success shape', () => {
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.body).sort()).toEqual(
      ['chaveAcesso', 'dataHoraProcessamento', 'idDps', 'nfseXmlGZipB64', 'tipoAmbiente', 'versaoAplicativo'].sort(),
    );
    expect(answer.body.tipoAmbiente).toBe(2);
    expect(answer.body.idDps).toBe(issued.id);
    expect(answer.body.dataHoraProcessamento).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}-03:00$/);
  });

  it('issues an NFS-e valid against NFSe_v1.01.xsd with a well-formed access key', () => {
    expect(validateXml('NFSe', issued.nfse)).toEqual({ ok: true });
    const chave = issued.chave;
    expect(chave).toMatch(/^[0-9]{50}$/);
    expect(Number(chave[49])).toBe(expectedDv(chave.slice(0, 49)));
    expect(chave.slice(0, 7)).toBe(RIO);
    expect(chave[7]).toBe('2');
    expect(chave[8]).toBe('2');
    expect(chave.slice(9, 23)).toBe(PROVIDER);
    const nNFSe = textOf(issued.nfse, 'infNFSe/nNFSe')!;
    expect(chave.slice(23, 36)).toBe(nNFSe.padStart(13, '0'));
    const dhProc = textOf(issued.nfse, 'infNFSe/dhProc')!;
    expect(chave.slice(36, 40)).toBe(dhProc.slice(2, 4) + dhProc.slice(5, 7));
    expect(issued.nfse).toContain(`<infNFSe Id="NFS${chave}">`);
  });

  it('fills the generated fields and computes the values as Sefin did for the official sample', () => {
    const nfse = issued.nfse;
    expect(textOf(nfse, 'infNFSe/xLocEmi')).toBe('Rio de Janeiro');
    expect(textOf(nfse, 'infNFSe/xLocPrestacao')).toBe('Rio de Janeiro');
    expect(textOf(nfse, 'infNFSe/cLocIncid')).toBe(RIO);
    expect(textOf(nfse, 'infNFSe/xTribNac')).toBe('Análise e desenvolvimento de sistemas.');
    expect(textOf(nfse, 'infNFSe/ambGer')).toBe('2');
    expect(textOf(nfse, 'infNFSe/tpEmis')).toBe('1');
    expect(textOf(nfse, 'infNFSe/cStat')).toBe('100');
    expect(textOf(nfse, 'infNFSe/emit/CNPJ')).toBe(PROVIDER);
    expect(textOf(nfse, 'infNFSe/emit/enderNac/UF')).toBe('RJ');
    // The official sample (same DPS, 5% ISS in Rio): vBC 10000.00, vISSQN 500.00, vTotalRet 615.00, vLiq 9385.00,
    // IBS/CBS base 8740.00 at 0.10% + 0.00% + 0.90%.
    expect(textOf(nfse, 'infNFSe/valores/vBC')).toBe('10000.00');
    expect(textOf(nfse, 'infNFSe/valores/pAliqAplic')).toBe('5.00');
    // the municipality's text of the breakdown 001 (the ADN seed of the sandbox)
    expect(textOf(nfse, 'infNFSe/xTribMun')).toBe('Análise e desenvolvimento de sistemas sob encomenda');
    expect(textOf(nfse, 'infNFSe/valores/vISSQN')).toBe('500.00');
    expect(textOf(nfse, 'infNFSe/valores/vTotalRet')).toBe('615.00');
    expect(textOf(nfse, 'infNFSe/valores/vLiq')).toBe('9385.00');
    expect(textOf(nfse, 'infNFSe/IBSCBS/cLocalidadeIncid')).toBe('3303302');
    expect(textOf(nfse, 'infNFSe/IBSCBS/xLocalidadeIncid')).toBe('Niterói');
    expect(textOf(nfse, 'infNFSe/IBSCBS/valores/vBC')).toBe('8740.00');
    expect(textOf(nfse, 'infNFSe/IBSCBS/totCIBS/vTotNF')).toBe('9385.00');
    expect(textOf(nfse, 'infNFSe/IBSCBS/totCIBS/gIBS/vIBSTot')).toBe('8.74');
    expect(textOf(nfse, 'infNFSe/IBSCBS/totCIBS/gIBS/gIBSUFTot/vIBSUF')).toBe('8.74');
    expect(textOf(nfse, 'infNFSe/IBSCBS/totCIBS/gIBS/gIBSMunTot/vIBSMun')).toBe('0.00');
    expect(textOf(nfse, 'infNFSe/IBSCBS/totCIBS/gCBS/vCBS')).toBe('78.66');
  });

  it('embeds the received signed DPS unchanged', () => {
    expect(issued.nfse).toContain(issued.dps);
  });

  it.skipIf(!hasTool('xmlsec1'))(
    'is signed over infNFSe by the sandbox key (xmlsec1), and the DPS signature still holds',
    () => {
      const nfseFile = join(dir, 'nfse.xml');
      const caFile = join(dir, 'sandbox-ca.pem');
      const testCaFile = join(dir, 'test-ca.pem');
      writeFileSync(nfseFile, issued.nfse);
      writeFileSync(caFile, identity.caPem);
      writeFileSync(testCaFile, testCa.certPem);
      const nfseSignature = "/*[local-name()='NFSe']/*[local-name()='Signature']";
      const verify = (file: string) =>
        spawnSync(
          'xmlsec1',
          ['--verify', '--id-attr:Id', 'infNFSe', '--trusted-pem', caFile, '--node-xpath', nfseSignature, file],
          {
            encoding: 'utf8',
          },
        );
      const ok = verify(nfseFile);
      expect(ok.status, ok.stderr).toBe(0);
      expect(issued.nfse).toContain('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256');
      // The embedded DPS signature (the first Signature in document order) verifies too.
      const dps = spawnSync('xmlsec1', ['--verify', '--id-attr:Id', 'infDPS', '--trusted-pem', testCaFile, nfseFile], {
        encoding: 'utf8',
      });
      expect(dps.status, dps.stderr).toBe(0);
      // And a tampered note does not.
      const tampered = join(dir, 'nfse-tampered.xml');
      writeFileSync(tampered, issued.nfse.replace('<vLiq>9385.00</vLiq>', '<vLiq>9386.00</vLiq>'));
      expect(verify(tampered).status).not.toBe(0);
    },
  );

  it('numbers NFS-e sequentially per emitter and accepts a DPS signed by a branch of the same CNPJ root', async () => {
    const first = Number(textOf(issued.nfse, 'infNFSe/nNFSe'));
    const next = await issueOne();
    expect(Number(textOf(next.nfse, 'infNFSe/nNFSe'))).toBe(first + 1);
    expect(Number(textOf(next.nfse, 'infNFSe/nDFSe'))).toBeGreaterThan(Number(textOf(issued.nfse, 'infNFSe/nDFSe')));
    const dps = buildDps();
    const byBranch = await postDps(asBranch, signEnveloped(dps.xml, 'infDPS', providerBranch));
    expect(byBranch.status, JSON.stringify(byBranch.body)).toBe(201);
  });

  it('accepts RSA-SHA256 signatures, from our signer and from an independent one (xml-crypto, exclusive C14N)', async () => {
    const sha256 = buildDps();
    const ours = await postDps(asProvider, signEnveloped(sha256.xml, 'infDPS', provider, 'rsa-sha256'));
    expect(ours.status, JSON.stringify(ours.body)).toBe(201);
    const other = buildDps();
    const independent = await postDps(asProvider, signWithXmlCrypto(other.xml, 'infDPS', provider));
    expect(independent.status, JSON.stringify(independent.body)).toBe(201);
  });

  it('computes deductions, discounts, a declared rate and withheld taxes', async () => {
    const dps = buildDps();
    const xml = dps.xml
      .replace(
        '</vServPrest><trib>',
        '</vServPrest><vDescCondIncond><vDescIncond>100.00</vDescIncond></vDescCondIncond><vDedRed><vDR>900.00</vDR></vDedRed><trib>',
      )
      .replace('<tpRetISSQN>1</tpRetISSQN>', '<tpRetISSQN>2</tpRetISSQN><pAliq>3.00</pAliq>')
      .replace('<tpRetPisCofins>2</tpRetPisCofins>', '<tpRetPisCofins>1</tpRetPisCofins>');
    const answer = await postDps(asProvider, signEnveloped(xml, 'infDPS', provider));
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const nfse = gunz(answer.body.nfseXmlGZipB64);
    expect(validateXml('NFSe', nfse)).toEqual({ ok: true });
    expect(textOf(nfse, 'infNFSe/valores/vCalcDR')).toBe('900.00');
    expect(textOf(nfse, 'infNFSe/valores/vBC')).toBe('9000.00');
    expect(textOf(nfse, 'infNFSe/valores/pAliqAplic')).toBe('3.00');
    expect(textOf(nfse, 'infNFSe/valores/vISSQN')).toBe('270.00');
    // IRRF 150 + CSLL 465 + ISS withheld by the taker 270 + PIS 0 + COFINS 760 (tpRetPisCofins 1).
    expect(textOf(nfse, 'infNFSe/valores/vTotalRet')).toBe('1645.00');
    expect(textOf(nfse, 'infNFSe/valores/vLiq')).toBe('8255.00');
    // IBS/CBS base: 10000 - 100 - 270 (ISS) - 0 (PIS) - 760 (COFINS).
    expect(textOf(nfse, 'infNFSe/IBSCBS/valores/vBC')).toBe('8870.00');
  });

  it('answers tipoAmbiente 1 on the production prefix', async () => {
    const dps = buildDps({ tpAmb: 1 });
    const answer = await postDps(asProvider, signEnveloped(dps.xml, 'infDPS', provider), PRODUCAO);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.body.tipoAmbiente).toBe(1);
    // Notes of one environment are not visible from the other.
    expect((await call(asProvider, 'GET', `${RESTRITA}/nfse/${answer.body.chaveAcesso}`)).status).toBe(404);
    expect((await call(asProvider, 'GET', `${PRODUCAO}/nfse/${answer.body.chaveAcesso}`)).status).toBe(200);
  });
});

describe('POST /nfse rejections', () => {
  async function rejected(payload: unknown, agent: Agent = asProvider): Promise<Answer> {
    const answer = await call(agent, 'POST', `${RESTRITA}/nfse`, payload);
    expect(answer.body.tipoAmbiente).toBe(2);
    expect(answer.body.versaoAplicativo).toBeTruthy();
    expect(Array.isArray(answer.body.erros)).toBe(true);
    return answer;
  }

  const signedDps = (options: DpsOptions = {}, cert: A1Certificate = provider) =>
    signEnveloped(buildDps(options).xml, 'infDPS', cert);

  it('E1225: not base64, not gzip, missing field', async () => {
    for (const payload of [
      { dpsXmlGZipB64: '%%% não é base64' },
      { dpsXmlGZipB64: Buffer.from('<DPS/>').toString('base64') },
      {},
    ]) {
      const answer = await rejected(payload);
      expect(answer.status).toBe(400);
      expect(codesOf(answer)).toEqual(['E1225']);
      expect(answer.body.erros[0].descricao).toBe('Falha na decodificação da base 64 da área de dados');
    }
    expect(codesOf(await rejected('não é json'))).toEqual(['E1225']);
  });

  it('E1226 malformed XML, E1228 namespace prefix, E1229 not UTF-8, E1242 another document', async () => {
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz('<DPS><infDPS></DPS>') }))).toEqual(['E1226']);
    const prefixed = buildDps()
      .xml.replace(/<(\/?)(DPS|infDPS)\b/g, '<$1n:$2')
      .replace('xmlns=', 'xmlns:n=');
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(prefixed) }))).toEqual(['E1228']);
    const latin1 = Buffer.from(
      `<?xml version="1.0" encoding="ISO-8859-1"?>${buildDps().xml.replace('MXM &amp;', 'AÇÃO &amp;')}`,
      'latin1',
    );
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(latin1) }))).toEqual(['E1229']);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(cancellationRequest('1'.repeat(50), PROVIDER)) }))).toEqual([
      'E1242',
    ]);
  });

  it('E1235 with the schema messages in complemento', async () => {
    const broken = signEnveloped(buildDps().xml.replace('<cLocEmi>3304557</cLocEmi>', ''), 'infDPS', provider);
    const answer = await rejected({ dpsXmlGZipB64: gz(broken) });
    expect(answer.status).toBe(400);
    expect(codesOf(answer)).toEqual(['E1235']);
    expect(answer.body.erros[0].descricao).toBe('Falha no esquema XML do DF-e.');
    expect(answer.body.erros[0].complemento).toMatch(/cLocEmi|prest/);
  });

  it('E0717 unsigned, E0714 tampered after signing', async () => {
    const unsigned = await rejected({ dpsXmlGZipB64: gz(buildDps().xml) });
    expect(unsigned.status).toBe(400);
    expect(codesOf(unsigned)).toEqual(['E0717']);
    const tampered = signedDps().replace('<vServ>10000.00</vServ>', '<vServ>1.00</vServ>');
    const answer = await rejected({ dpsXmlGZipB64: gz(tampered) });
    expect(codesOf(answer)).toEqual(['E0714']);
    expect(answer.body.erros[0].descricao).toBe('Arquivo enviado com erro na assinatura.');
    expect(answer.body.idDPS).toMatch(/^DPS[0-9]{42}$/);
  });

  it('E0718 when the DPS is signed with another taxpayer’s certificate', async () => {
    const answer = await rejected({ dpsXmlGZipB64: gz(signedDps({}, taker)) });
    expect(answer.status).toBe(400);
    expect(codesOf(answer)).toEqual(['E0718']);
  });

  it('E0715 expired signing certificate, E0716 certificate without CNPJ/CPF', async () => {
    const expired = readPkcs12(
      createA1Certificate({
        cnpj: PROVIDER,
        name: 'VENCIDO',
        password: PASSWORD,
        notBefore: new Date('2020-01-01T00:00:00Z'),
        notAfter: new Date('2021-01-01T00:00:00Z'),
      }).pfx,
      PASSWORD,
      new Date('2020-06-01T00:00:00Z'),
    );
    if (!expired.ok) throw new Error(expired.error.message);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({}, expired.value)) }))).toEqual(['E0715']);
    const anonymousCert = readA1(
      createA1Certificate({
        cnpj: PROVIDER,
        name: 'X',
        commonName: 'SEM IDENTIFICACAO',
        otherName: false,
        password: PASSWORD,
      }),
    );
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({}, anonymousCert)) }))).toEqual(['E0716']);
  });

  it('403 E1200 when the TLS client certificate is not the emitter’s', async () => {
    const answer = await rejected({ dpsXmlGZipB64: gz(signedDps()) }, asStranger);
    expect(answer.status).toBe(403);
    expect(codesOf(answer)).toEqual(['E1200']);
    expect(answer.body.erros[0].complemento).toContain('45997418');
  });

  it('403 E1200 without a client certificate', async () => {
    const answer = await rejected({ dpsXmlGZipB64: gz(signedDps()) }, anonymous);
    expect(answer.status).toBe(403);
    expect(codesOf(answer)).toEqual(['E1200']);
  });

  it('E0004 Id composition, E0006 environment, E0008 future dhEmi, E0010 series, E0015 competence', async () => {
    const otherNumberId = buildDps({ nDPS: 555001 }).id;
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ nDPS: 555000, id: otherNumberId })) }))).toEqual([
      'E0004',
    ]);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ tpAmb: 1 })) }))).toEqual(['E0006']);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ dhEmi: brasilia(3600_000) })) }))).toEqual(['E0008']);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ serie: '50000' })) }))).toEqual(['E0010']);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ serie: '0' })) }))).toEqual(['E0010']);
    const dhEmi = brasilia(-2 * 86400_000);
    const nextDay = brasilia(-86400_000).slice(0, 10);
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(signedDps({ dhEmi, dCompet: nextDay })) }))).toEqual(['E0015']);
  });

  it('E0037 for a municipality outside the national agreement (the adhesion list), except for a MEI emitter', async () => {
    const CAMPINAS = '3509502'; // own system (ISSCampinas), not in the adhesion list
    for (const opSimpNac of ['1', '3'] as const) {
      const answer = await rejected({ dpsXmlGZipB64: gz(signedDps({ cLocEmi: CAMPINAS, opSimpNac })) });
      expect(answer.status).toBe(400);
      expect(codesOf(answer)).toEqual(['E0037']);
      expect(answer.body.erros[0].descricao).toBe(
        'O código do município emissor informado na DPS é inexistente no cadastro de convênio municipal do sistema nacional.',
      );
    }
    const mei = await issueOne({ cLocEmi: CAMPINAS, opSimpNac: '2' });
    expect(mei.chave).toMatch(/^3509502/);
    // São Paulo is in the adhesion list (it accepts the national emitter beside its own system)
    expect((await issueOne({ cLocEmi: '3550308', opSimpNac: '1' })).chave).toMatch(/^3550308/);
  });

  it('E0314: the cTribMun must exist in the parametrisation of the municipality of incidence (ADN seed)', async () => {
    const sign = (xml: string) => gz(signEnveloped(xml, 'infDPS', provider));
    // Rio broke 01.01.01 down into 001 and 002 (src/sandbox/adn/seed.ts): 009 is unknown, none is missing
    const unknown = await rejected({
      dpsXmlGZipB64: sign(buildDps().xml.replace('<cTribMun>001</cTribMun>', '<cTribMun>009</cTribMun>')),
    });
    expect(codesOf(unknown)).toEqual(['E0314']);
    const missing = await rejected({ dpsXmlGZipB64: sign(buildDps().xml.replace('<cTribMun>001</cTribMun>', '')) });
    expect(codesOf(missing)).toEqual(['E0314']);
  });

  it('reports every business-rule failure at once, with the official texts', async () => {
    const answer = await rejected({ dpsXmlGZipB64: gz(signedDps({ tpAmb: 1, serie: '70000' })) });
    expect(answer.status).toBe(400);
    expect(codesOf(answer).sort()).toEqual(['E0006', 'E0010']);
    const e0006 = answer.body.erros.find((e: { codigo: string }) => e.codigo === 'E0006');
    expect(e0006.descricao).toBe(
      'Ambiente informado diverge do ambiente de recebimento para o qual o emitente enviou a DPS.',
    );
  });

  it('E0014 when the same series and number were already used', async () => {
    const first = await issueOne({ nDPS: 777001 });
    const again = await rejected({ dpsXmlGZipB64: gz(first.dps) });
    expect(again.status).toBe(400);
    expect(codesOf(again)).toEqual(['E0014']);
    expect(again.body.erros[0].descricao).toBe(
      'Conjunto de Série, Número, Código do Município Emissor e CNPJ/CPF informado nesta DPS já existe em uma NFS-e gerada a partir de uma DPS enviada anteriormente.',
    );
    // The same number with leading zeros in the series is the same DPS.
    const padded = signedDps({ serie: '00001', nDPS: 777001 });
    expect(codesOf(await rejected({ dpsXmlGZipB64: gz(padded) }))).toEqual(['E0014']);
  });
});

describe('queries', () => {
  let note: { chave: string; id: string; nfse: string };

  beforeAll(async () => {
    note = await issueOne();
  });

  it('GET /nfse/{chave}: actors only', async () => {
    const mine = await call(asProvider, 'GET', `${RESTRITA}/nfse/${note.chave}`);
    expect(mine.status).toBe(200);
    expect(mine.body.chaveAcesso).toBe(note.chave);
    expect(mine.body.tipoAmbiente).toBe(2);
    expect(gunz(mine.body.nfseXmlGZipB64)).toBe(note.nfse);
    expect((await call(asTaker, 'GET', `${RESTRITA}/nfse/${note.chave}`)).status).toBe(200);
    const other = await call(asStranger, 'GET', `${RESTRITA}/nfse/${note.chave}`);
    expect(other.status).toBe(403);
    expect(other.body.erro.descricao).toBe('Consulta desta NFS-e não é permitida para este usuário.');
    expect((await call(anonymous, 'GET', `${RESTRITA}/nfse/${note.chave}`)).status).toBe(401);
    const unknown = `${note.chave.slice(0, 40)}0000000000`;
    expect((await call(asProvider, 'GET', `${RESTRITA}/nfse/${unknown}`)).status).toBe(404);
    const bad = await call(asProvider, 'GET', `${RESTRITA}/nfse/123`);
    expect(bad.status).toBe(400);
    expect(bad.body.erro).toMatchObject({ descricao: 'A chave de acesso consultada deve conter 50 números.' });
  });

  it('GET and HEAD /dps/{id}', async () => {
    const got = await call(asProvider, 'GET', `${RESTRITA}/dps/${note.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ tipoAmbiente: 2, idDps: note.id, chaveAcesso: note.chave });
    expect((await call(asTaker, 'GET', `${RESTRITA}/dps/${note.id}`)).status).toBe(200);
    expect((await call(asStranger, 'GET', `${RESTRITA}/dps/${note.id}`)).status).toBe(403);
    const head = await call(asStranger, 'HEAD', `${RESTRITA}/dps/${note.id}`);
    expect(head).toEqual({ status: 200, body: null });
    const missing = `DPS${RIO}2${PROVIDER}00001${'9'.repeat(15)}`;
    expect((await call(asStranger, 'HEAD', `${RESTRITA}/dps/${missing}`)).status).toBe(404);
    const notFound = await call(asProvider, 'GET', `${RESTRITA}/dps/${missing}`);
    expect(notFound.status).toBe(404);
    expect(notFound.body.erro.descricao).toBe('Não foi gerada uma NFS-e com o identificador de DPS informado');
    expect((await call(asProvider, 'GET', `${RESTRITA}/dps/DPS123`)).status).toBe(400);
    expect((await call(anonymous, 'HEAD', `${RESTRITA}/dps/${note.id}`)).status).toBe(401);
    expect((await call(asProvider, 'GET', `${PRODUCAO}/dps/${note.id}`)).status).toBe(404);
  });

  it('GET /__sandbox/issued lists what was issued, without a client certificate', async () => {
    const listed = await call(anonymous, 'GET', '/__sandbox/issued');
    expect(listed.status).toBe(200);
    const entry = listed.body.find((r: { chaveAcesso: string }) => r.chaveAcesso === note.chave);
    expect(entry).toMatchObject({
      environment: 2,
      idDps: note.id,
      prestador: PROVIDER,
      tomador: TAKER,
      cancelled: false,
    });
    expect(entry.nfseXml).toBeUndefined();
    expect(sandbox.issued().find((r) => r.chaveAcesso === note.chave)?.nfseXml).toBe(note.nfse);
  });
});

describe('events', () => {
  const postEvent = (agent: Agent, chave: string, xml: string, base = RESTRITA) =>
    call(agent, 'POST', `${base}/nfse/${chave}/eventos`, { pedidoRegistroEventoXmlGZipB64: gz(xml) });

  it('cancels once: 201 with a signed evento, then the official refusal', async () => {
    const note = await issueOne();
    const pedido = signEnveloped(cancellationRequest(note.chave, PROVIDER), 'infPedReg', provider);
    expect(validateXml('pedRegEvento', pedido)).toEqual({ ok: true });
    const answer = await postEvent(asProvider, note.chave, pedido);
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(Object.keys(answer.body).sort()).toEqual(
      ['dataHoraProcessamento', 'eventoXmlGZipB64', 'tipoAmbiente', 'versaoAplicativo'].sort(),
    );
    const evento = gunz(answer.body.eventoXmlGZipB64);
    expect(validateXml('evento', evento)).toEqual({ ok: true });
    expect(evento).toContain(`<infEvento Id="EVT${note.chave}101101001">`);
    expect(textOf(evento, 'infEvento/nSeqEvento')).toBe('1');
    expect(textOf(evento, 'infEvento/ambGer')).toBe('2');
    expect(evento).toContain(pedido);

    if (hasTool('xmlsec1')) {
      const file = join(dir, 'evento.xml');
      const caFile = join(dir, 'sandbox-ca-ev.pem');
      writeFileSync(file, evento);
      writeFileSync(caFile, identity.caPem);
      const run = spawnSync(
        'xmlsec1',
        [
          '--verify',
          '--id-attr:Id',
          'infEvento',
          '--trusted-pem',
          caFile,
          '--node-xpath',
          "/*[local-name()='evento']/*[local-name()='Signature']",
          file,
        ],
        { encoding: 'utf8' },
      );
      expect(run.status, run.stderr).toBe(0);
    }

    const fetched = await call(asProvider, 'GET', `${RESTRITA}/nfse/${note.chave}/eventos/101101/1`);
    expect(fetched.status).toBe(200);
    expect(gunz(fetched.body.eventoXmlGZipB64)).toBe(evento);
    expect((await call(asTaker, 'GET', `${RESTRITA}/nfse/${note.chave}/eventos/101101/001`)).status).toBe(200);
    expect((await call(asStranger, 'GET', `${RESTRITA}/nfse/${note.chave}/eventos/101101/1`)).status).toBe(401);
    expect((await call(asProvider, 'GET', `${RESTRITA}/nfse/${note.chave}/eventos/101101/2`)).status).toBe(404);
    expect(sandbox.issued().find((r) => r.chaveAcesso === note.chave)?.cancelled).toBe(true);

    const again = signEnveloped(cancellationRequest(note.chave, PROVIDER), 'infPedReg', provider);
    const refused = await postEvent(asProvider, note.chave, again);
    expect(refused.status).toBe(400);
    expect(refused.body.erro.codigo).toBe('E0840');
    expect(refused.body.erro.descricao).toContain('o evento de Cancelamento de NFS-e já está vinculado');
    expect(refused.body.erros).toBeUndefined();
  });

  it('holds the event rules', async () => {
    const note = await issueOne();
    const signedBy = (cert: A1Certificate, xml: string) => signEnveloped(xml, 'infPedReg', cert);
    const code = async (agent: Agent, path: string, xml: string) => {
      const answer = await postEvent(agent, path, xml);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      return answer.body.erro.codigo;
    };
    // Unsigned, tampered.
    expect(await code(asProvider, note.chave, cancellationRequest(note.chave, PROVIDER))).toBe('E1989');
    const tampered = signedBy(provider, cancellationRequest(note.chave, PROVIDER)).replace(
      '<cMotivo>1</cMotivo>',
      '<cMotivo>2</cMotivo>',
    );
    expect(await code(asProvider, note.chave, tampered)).toBe('E1980');
    // Author CNPJ other than the signing certificate's.
    expect(await code(asProvider, note.chave, signedBy(provider, cancellationRequest(note.chave, TAKER)))).toBe(
      'E0812',
    );
    // The taker may not cancel the provider's note.
    expect(await code(asTaker, note.chave, signedBy(taker, cancellationRequest(note.chave, TAKER)))).toBe('E0813');
    // Environment, path/body key, unknown note.
    expect(
      await code(asProvider, note.chave, signedBy(provider, cancellationRequest(note.chave, PROVIDER, { tpAmb: 1 }))),
    ).toBe('E1845');
    const other = await issueOne();
    expect(await code(asProvider, note.chave, signedBy(provider, cancellationRequest(other.chave, PROVIDER)))).toBe(
      'E0831',
    );
    const unknown = `${note.chave.slice(0, 40)}0000000000`;
    expect(await code(asProvider, unknown, signedBy(provider, cancellationRequest(unknown, PROVIDER)))).toBe('E1831');
    // Schema.
    const invalid = signedBy(
      provider,
      cancellationRequest(note.chave, PROVIDER).replace(/<xMotivo>[^<]*<\/xMotivo>/, '<xMotivo>curto</xMotivo>'),
    );
    expect(await code(asProvider, note.chave, invalid)).toBe('E1235');
    // Without a client certificate.
    const anon = await postEvent(anonymous, note.chave, signedBy(provider, cancellationRequest(note.chave, PROVIDER)));
    expect(anon.status).toBe(401);
    // Nothing above cancelled the note.
    expect(sandbox.issued().find((r) => r.chaveAcesso === note.chave)?.cancelled).toBe(false);
  });
});

describe('faults', () => {
  const issuedCount = () => sandbox.issued().length;

  it('errorRate: 500 with the official error shape, nothing committed', async () => {
    sandbox.setFaults({ errorRate: 1 });
    const before = issuedCount();
    const dps = buildDps();
    const answer = await postDps(asProvider, signEnveloped(dps.xml, 'infDPS', provider));
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ tipoAmbiente: 2, erros: [{ codigo: '500' }] });
    expect(answer.body.versaoAplicativo).toBeTruthy();
    sandbox.setFaults({});
    expect(issuedCount()).toBe(before);
    expect((await call(asProvider, 'HEAD', `${RESTRITA}/dps/${dps.id}`)).status).toBe(404);
  });

  it('dropBeforeProcessRate: the connection is dropped and nothing is committed', async () => {
    sandbox.setFaults({ dropBeforeProcessRate: 1 });
    const before = issuedCount();
    const dps = buildDps();
    await expect(postDps(asProvider, signEnveloped(dps.xml, 'infDPS', provider))).rejects.toThrow();
    sandbox.setFaults({});
    expect(issuedCount()).toBe(before);
    expect((await call(asProvider, 'GET', `${RESTRITA}/dps/${dps.id}`)).status).toBe(404);
  });

  it('commitThenDropRate: the client sees a socket error, yet the note exists', async () => {
    sandbox.setFaults({ commitThenDropRate: 1 });
    const dps = buildDps();
    const signed = signEnveloped(dps.xml, 'infDPS', provider);
    await expect(postDps(asProvider, signed)).rejects.toThrow();
    sandbox.setFaults({});
    const found = await call(asProvider, 'GET', `${RESTRITA}/dps/${dps.id}`);
    expect(found.status).toBe(200);
    expect(found.body.chaveAcesso).toMatch(/^[0-9]{50}$/);
    // A retry of the same DPS is a duplicate: the client must look the note up, not issue again.
    expect(codesOf(await postDps(asProvider, signed))).toEqual(['E0014']);
  });

  it('latency, set over HTTP without a client certificate', async () => {
    const put = await call(anonymous, 'PUT', '/__sandbox/faults', { latencyMs: 300, latencyJitterMs: 0 });
    expect(put).toEqual({ status: 200, body: { latencyMs: 300, latencyJitterMs: 0 } });
    const started = Date.now();
    expect((await call(asProvider, 'HEAD', `${RESTRITA}/dps/DPS${'1'.repeat(42)}`)).status).toBe(404);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await call(anonymous, 'GET', '/__sandbox/faults')).body).toEqual({ latencyMs: 300, latencyJitterMs: 0 });
    expect((await call(anonymous, 'PUT', '/__sandbox/faults', { errorRate: 2 })).status).toBe(400);
    expect((await call(anonymous, 'PUT', '/__sandbox/faults', {})).status).toBe(200);
    const quick = Date.now();
    await call(asProvider, 'HEAD', `${RESTRITA}/dps/DPS${'1'.repeat(42)}`);
    expect(Date.now() - quick).toBeLessThan(290);
  });
});

describe('persistence', () => {
  it('a restarted sandbox on the same store file keeps notes, numbers and events', async () => {
    const storeFile = join(dir, 'restart.jsonl');
    const first = await startSefinSandbox({ tls: identity.tls, signer: identity.signer, storeFile });
    const previous = sandbox;
    sandbox = first;
    try {
      const note = await issueOne();
      const nNFSe = Number(textOf(note.nfse, 'infNFSe/nNFSe'));
      const pedido = signEnveloped(cancellationRequest(note.chave, PROVIDER), 'infPedReg', provider);
      const cancel = await call(asProvider, 'POST', `${RESTRITA}/nfse/${note.chave}/eventos`, {
        pedidoRegistroEventoXmlGZipB64: gz(pedido),
      });
      expect(cancel.status).toBe(201);
      await first.close();

      sandbox = await startSefinSandbox({ tls: identity.tls, signer: identity.signer, storeFile });
      const got = await call(asProvider, 'GET', `${RESTRITA}/nfse/${note.chave}`);
      expect(got.status).toBe(200);
      expect(gunz(got.body.nfseXmlGZipB64)).toBe(note.nfse);
      expect(codesOf(await postDps(asProvider, note.dps))).toEqual(['E0014']);
      const next = await issueOne();
      expect(Number(textOf(next.nfse, 'infNFSe/nNFSe'))).toBe(nNFSe + 1);
      const again = signEnveloped(cancellationRequest(note.chave, PROVIDER), 'infPedReg', provider);
      const refused = await call(asProvider, 'POST', `${RESTRITA}/nfse/${note.chave}/eventos`, {
        pedidoRegistroEventoXmlGZipB64: gz(again),
      });
      expect(refused.body.erro.codigo).toBe('E0840');
      await sandbox.close();
    } finally {
      sandbox = previous;
    }
  });
});
