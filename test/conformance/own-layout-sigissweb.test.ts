import { describe, expect, it } from 'vitest';
import { sigIssWebDefinition } from '../../src/engines/own-layout/sigissweb.ts';
import { createSigIssWebService } from '../../src/sandbox/own-layout/sigissweb.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * SigISSWeb own layout against its sandbox: a provider in Sumaré/SP (3552403) logging in with its CNPJ and the
 * web-service password. The business rejection: a note whose provider is not the logged-in taxpayer (10).
 */
const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '3552403', ...IBS_CBS_FRAMING });
const otherProvider = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3552403',
  cnpj: '99887766000105',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: sigIssWebDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { municipalUser: project.cnpj, municipalPassword: 'senha-ws' },
  rejection: { project: otherProvider, invoice: normalized(otherProvider), code: '10' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'own-layout-sigissweb',
      create: (deps) => createSigIssWebService(deps),
      settings: { path: '/__sandbox/own-layout-sigissweb/settings', body: { users: { [project.cnpj]: 'senha-ws' } } },
    }),
});

describe('SigISSWeb layout', () => {
  const note = sigIssWebDefinition.declaration.build({
    project,
    invoice: normalized(project, {
      tomador: {
        cnpj: '11444777000161',
        nome: 'Tomadora São João Ltda',
        endereco: {
          logradouro: 'Rua A',
          numero: '1',
          bairro: 'Centro',
          codigoMunicipio: '3552403',
          uf: 'SP',
          cep: '13170000',
        },
      },
    }),
    serie: '1',
    number: 42,
    issuedAt: new Date('2026-03-05T15:00:00Z'),
  } as never).xml;

  it('writes the flat <notafiscal> in ASCII with an ISO-8859-1 declaration, amounts with a decimal comma', () => {
    expect(note.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?><notafiscal><cnpj_cpf_prestador>')).toBe(true);
    expect(/[^\x20-\x7e]/.test(note)).toBe(false);
    expect(note).toContain('<razao_social_destinatario>Tomadora S&#227;o Jo&#227;o Ltda</razao_social_destinatario>');
    expect(note).toContain('<cidade_destinatario>Sumar&#233;</cidade_destinatario>');
    expect(note).toContain('<valor_servico>1500,50</valor_servico>');
    expect(note).toContain('<data_emissao>05/03/2026</data_emissao>');
    expect(note).toContain('<rps>42</rps>');
    expect(note).toContain('<codigo_nbs>1.1502.10.00</codigo_nbs>');
  });
});
