import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteOf } from '../../src/engines/abrasf-v2/define.ts';
import { TINUS_CONFIG } from '../../src/engines/abrasf-v2/providers/tinus.ts';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/define.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { TINUS_PROFILE } from '../../src/sandbox/abrasf-v2/tinus.ts';
import { signXml } from '../../src/xml/sign.ts';
import { parseXml } from '../../src/xml/read.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The generic ABRASF sandbox with the Tinus profile on raw requests: the Envio as the body, the answer in
 * `<root>Response` (the XSD's own answer elements), a national-layout NFS-e (infNFSe with the 50-digit key, nNFSe,
 * dhProc, DPS/infDPS) that the base reads back; an RPS without the reform's required regApTribSN is refused (E160).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2607901',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '778899',
});
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
const family = defineAbrasfProvider(TINUS_CONFIG);
let numbers = 800_000 + (Date.now() % 100_000);
let env: Awaited<ReturnType<typeof startAbrasfSandbox>>;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(TINUS_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

function gerar(edit: (xml: string) => string = (x) => x): string {
  const built = family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  const key = { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem };
  const rps = signXml(edit(built.xml), { elementName: 'InfDeclaracaoPrestacaoServico', key });
  return `<GerarNfseEnvio xmlns="${ABRASF}">${rps}</GerarNfseEnvio>`;
}

async function call(body: string): Promise<string> {
  const answer = await http.send(env.certificate, 'POST', `${env.url}/municipal/abrasf-tinus/producaorestrita`, {
    headers: {
      'content-type': 'text/xml; charset=utf-8',
      soapaction: 'http://nfse.abrasf.org.br/WSNFSE203.Service2.nfseSOAP.GerarNfseEnvio',
    },
    body: `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  return answer.body;
}

describe('the generic ABRASF 2.0x sandbox (Tinus profile)', () => {
  it('answers GerarNfse in GerarNfseEnvioResponse with a national-layout NFS-e the base reads', async () => {
    const body = await call(gerar());
    expect(body).toMatch(/<GerarNfseEnvioResponse xmlns="http:\/\/www\.abrasf\.org\.br\/nfse\.xsd"><GerarNfseResposta/);
    const comp = /<CompNfse[\s\S]*<\/CompNfse>/.exec(body)![0];
    expect(comp).toMatch(/<infNFSe xmlns="http:\/\/www\.sped\.fazenda\.gov\.br\/nfse" Id="NFS\d{50}">/);
    const parsed = parseXml(comp);
    if (!parsed.ok) throw new Error('unparsable');
    const note = noteOf(parsed.root);
    expect(note.numero).toMatch(/^\d+$/);
    expect(note.chave).toMatch(/^\d{50}$/);
    expect(note.at).toBeTruthy();
  });

  it('refuses an RPS without regApTribSN (E160)', async () => {
    const body = await call(gerar((x) => x.replace(/<regApTribSN>\d<\/regApTribSN>/, '')));
    expect(body).toContain('<Codigo>E160</Codigo>');
    expect(body).toContain('regApTribSN');
  });
});
