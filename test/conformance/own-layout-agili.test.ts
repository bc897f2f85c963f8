import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { agiliDefinition, declaracaoXml } from '../../src/engines/own-layout/agili.ts';
import { createAgiliService } from '../../src/sandbox/own-layout/agili.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Agili (Rondonópolis/MT, 5107602) against its sandbox: a provider outside the Simples Nacional with its digital key
 * (`ChaveDigital`, the project's `accessToken`) and its city hall's CNPJ (`UnidadeGestora`, the project's
 * `cnpjPrefeitura`). The business rejection: the key's taxpayer is registered outside the Simples Nacional and the
 * note declares it (the sandbox's A005).
 */
const KEY = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const CITY_HALL = '03347101000121';
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '5107602',
  inscricaoMunicipal: '123456',
  codigoTributacao: '010101',
  ...IBS_CBS_FRAMING,
});
const simples = { ...project, regimeTributario: '3' as const };

describeConformance({
  family: agiliDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { accessToken: KEY, cnpjPrefeitura: CITY_HALL },
  rejection: { project: simples, invoice: normalized(simples), code: 'A005' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'agili',
      create: (deps) => createAgiliService(deps),
      settings: {
        path: '/__sandbox/agili/settings',
        body: {
          unidadesGestoras: { [CITY_HALL]: '5107602' },
          keys: { [KEY]: { cnpj: project.cnpj, simplesNacional: false } },
        },
      },
    }),
});

describe('Agili sandbox rules (the provider schema, the city hall, the key)', () => {
  let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
  beforeAll(async () => {
    env = await startRawXmlSandbox({
      project,
      slug: 'agili',
      create: (deps) => createAgiliService(deps),
      settings: {
        path: '/__sandbox/agili/settings',
        body: { unidadesGestoras: { [CITY_HALL]: '5107602' }, keys: { [KEY]: { cnpj: project.cnpj } } },
      },
    });
  });
  afterAll(async () => env?.close());

  let number = 900_000;
  const message = (unidade: string, key: string, edit: (xml: string) => string = (x) => x) =>
    edit(
      declaracaoXml({
        project,
        invoice: normalized(project),
        serie: '1',
        number: ++number,
        issuedAt: new Date(),
      }),
    )
      .replace(/^(<GerarNfseEnvio [^>]*>)/, `$1<UnidadeGestora>${unidade}</UnidadeGestora>`)
      .replace('<IdentificacaoPrestador>', `<IdentificacaoPrestador><ChaveDigital>${key}</ChaveDigital>`);
  const post = async (xml: string) => {
    const res = await request(`${env.url}/municipal/agili/producaorestrita/GerarNfse`, {
      method: 'POST',
      dispatcher: env.admin,
      headers: { 'content-type': 'application/xml; charset=utf-8' },
      body: xml,
    });
    return { status: res.statusCode, body: await res.body.text() };
  };
  const code = (xml: string) => /<Codigo>([^<]+)<\/Codigo>/.exec(xml)?.[1];

  it('issues a note whose answer satisfies the provider schema (GerarNfseResposta)', async () => {
    const answer = await post(message(CITY_HALL, KEY));
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('<Nfse>');
    expect(validateXml('agili', answer.body)).toEqual({ ok: true });
  });

  it('keeps the note and its cancellation with the echoed key masked, and asks for the city hall when it is missing', async () => {
    const http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
    const engine = createEngine(agiliDefinition, {
      http,
      endpoints: env.endpoints,
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    const connection = {
      certificate: env.certificate,
      ambiente: 2 as const,
      municipality: project.codigoMunicipio,
      credentials: { accessToken: KEY, cnpjPrefeitura: CITY_HALL },
    };
    try {
      const prepared = engine.prepare({
        project,
        invoice: normalized(project),
        serie: '1',
        number: ++number,
        issuedAt: new Date(),
        certificate: env.certificate,
      });
      if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
      expect(prepared.value.xml).not.toContain('UnidadeGestora');
      const issued = await engine.issue(prepared.value, connection);
      if (issued.kind !== 'ok') throw new Error(JSON.stringify(issued));
      expect(issued.value.xml).not.toContain(KEY);
      expect(issued.value.xml).toContain(`<ChaveDigital>${'*'.repeat(32)}</ChaveDigital>`);
      const reference = { chave: null, numero: issued.value.numero, verificationCode: null, ambiente: 2 as const };
      const cancelled = await engine.cancel(
        { ...reference, providerCnpj: project.cnpj },
        'Erro na emissão',
        connection,
      );
      if (cancelled.kind !== 'ok') throw new Error(JSON.stringify(cancelled));
      expect(cancelled.value.xml).not.toContain(KEY);
      const missing = await engine.issue(prepared.value, { ...connection, credentials: { accessToken: KEY } });
      expect(missing.kind === 'rejected' && missing.errorCode).toBe('ENGINE_CREDENTIALS_MISSING');
    } finally {
      await http.close();
    }
  });

  it('refuses a message outside the schema (A001), an unknown city hall (A002) and a foreign key (A003)', async () => {
    const invalid = await post(message(CITY_HALL, KEY, (x) => x.replace(/<Versao>1\.00<\/Versao>/, '')));
    expect(code(invalid.body)).toBe('A001');
    expect(validateXml('agili', invalid.body)).toEqual({ ok: true });
    const otherCity = await post(message('11222333000181', KEY));
    expect(code(otherCity.body)).toBe('A002');
    const badCheckDigits = await post(message('03347101000122', KEY));
    expect(code(badCheckDigits.body)).toBe('A002');
    const otherKey = await post(message(CITY_HALL, 'f'.repeat(32)));
    expect(code(otherKey.body)).toBe('A003');
    expect(validateXml('agili', otherKey.body)).toEqual({ ok: true });
  });
});
