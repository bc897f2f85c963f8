import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipmDefinition } from '../../src/engines/ipm/definition.ts';
import { multipart } from '../../src/engines/ipm/transport.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { EngineFamily } from '../../src/engines/types.ts';
import { createIpmService } from '../../src/sandbox/ipm/service.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * IPM's own layout against its sandbox (homologation): a provider in Rio do Sul/SC (IPM 1.01, TOM 8291) with its
 * Atende.Net Basic credentials (CNPJ:senha). The business rejection: a note for another CNPJ than the Basic user
 * (00133, permission range 131–139 of the manual).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4214805',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const other = { ...project, cnpj: '11222333000262' };

describeConformance({
  family: ipmDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { basicAuthUsuario: project.cnpj, basicAuthSenha: 'senha-atende' },
  rejection: { project: other, invoice: normalized(other), code: '00133' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'ipm',
      create: (deps) => createIpmService(deps),
      settings: { path: '/__sandbox/ipm/settings', body: { users: { [project.cnpj]: 'senha-atende' } } },
    }),
});

/**
 * The legacy 1.00 transport (8 IPM cities, `nfw_import_upload.php`): the same suite for a provider in Penha/SC
 * (IPM 1.00, TOM 8245), whose credentials travel as the form fields login/senha/cidade with the file as f1 and
 * `?eletron=1` / `?formato_saida=2` (the sandbox answers XML only then, and refuses a form city that is not the
 * prestador's TOM).
 */
const legacyProject = { ...project, codigoMunicipio: '4212502' };
const legacyOther = { ...legacyProject, cnpj: '11222333000262' };

describeConformance({
  family: ipmDefinition,
  project: legacyProject,
  invoice: () => normalized(legacyProject),
  credentials: { basicAuthUsuario: legacyProject.cnpj, basicAuthSenha: 'senha-atende' },
  rejection: { project: legacyOther, invoice: normalized(legacyOther), code: '00133' },
  start: () =>
    startRawXmlSandbox({
      project: legacyProject,
      slug: 'ipm',
      create: (deps) => createIpmService(deps),
      settings: { path: '/__sandbox/ipm/settings', body: { users: { [legacyProject.cnpj]: 'senha-atende' } } },
    }),
});

/**
 * Beyond the shared suite: the provider's PDF (spec 4.4), downloaded from the note's public link (the sandbox's
 * `?codauten=` page), without the Basic credentials, byte for byte; an unknown code is a refusal, never a PDF.
 */
describe('IPM: the PDF from the provider link', () => {
  let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
  let http: GovernmentHttpClient;
  let engine: EngineFamily;
  const credentials = { basicAuthUsuario: project.cnpj, basicAuthSenha: 'senha-atende' };

  beforeAll(async () => {
    env = await startRawXmlSandbox({
      project,
      slug: 'ipm',
      create: (deps) => createIpmService(deps),
      settings: { path: '/__sandbox/ipm/settings', body: { users: { [project.cnpj]: 'senha-atende' } } },
    });
    http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
    engine = createEngine(ipmDefinition, {
      http,
      endpoints: env.endpoints,
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
  });
  afterAll(async () => {
    await http?.close();
    await env?.close();
  });

  it('downloads a real PDF of an issued note, and refuses an unknown code', async () => {
    const prepared = engine.prepare({
      project,
      invoice: normalized(project),
      serie: project.serieNfse,
      number: 901,
      issuedAt: new Date(Date.now() - 60_000),
      certificate: env.certificate,
    });
    if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
    const connection = { certificate: env.certificate, ambiente: 2 as const, municipality: '4214805', credentials };
    const issued = await engine.issue(prepared.value, connection);
    if (issued.kind !== 'ok') throw new Error(JSON.stringify(issued));
    const target = { ambiente: 2 as const, municipality: '4214805' };
    const reference = { chave: null, numero: issued.value.numero, ambiente: 2 as const };

    const pdf = await engine.fetchPdf?.(
      { ...reference, verificationCode: issued.value.verificationCode ?? null },
      target,
    );
    expect(pdf?.kind, JSON.stringify(pdf)).toBe('ok');
    if (pdf?.kind !== 'ok') return;
    expect(pdf.value.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.value.subarray(-6).toString('latin1')).toContain('%%EOF');

    const unknown = await engine.fetchPdf?.({ ...reference, verificationCode: '00000000000000' }, target);
    expect(unknown?.kind).toBe('rejected');
  });
});

describe('IPM: the two transports', () => {
  const context = (municipality: string) => ({
    endpoints: { url: () => 'https://ipm.example/upload.php' },
    ambiente: 2 as const,
    municipality,
    certificate: null as never,
    credentials: { basicAuthUsuario: project.cnpj, basicAuthSenha: 'senha-atende' },
  });

  it('1.00 sends login/senha/cidade and the file as f1, asking for XML; 1.01 one file part under Basic', () => {
    const legacy = multipart(context('4212502'), '<nfse/>', 'n.xml', 'send');
    expect(legacy.url).toBe('https://ipm.example/upload.php?eletron=1');
    expect(legacy.anonymous).toBe(true);
    expect(legacy.body).toContain('name="login"\r\n\r\n11222333000181\r\n');
    expect(legacy.body).toContain('name="senha"\r\n\r\nsenha-atende\r\n');
    expect(legacy.body).toContain('name="cidade"\r\n\r\n8245\r\n');
    expect(legacy.body).toContain('name="f1"; filename="n.xml"');
    expect(multipart(context('4212502'), '<x/>', 'q.xml', 'query').url).toMatch(/\?formato_saida=2$/);

    const current = multipart(context('4214805'), '<nfse/>', 'n.xml', 'send');
    expect(current.url).toBe('https://ipm.example/upload.php');
    expect(current.anonymous).toBeUndefined();
    expect(current.body).not.toContain('name="login"');
    expect(current.body).toContain('name="arquivo"; filename="n.xml"');
  });
});
