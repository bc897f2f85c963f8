import { describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { CENTI_CONFIG } from '../../src/engines/abrasf-v2/providers/centi.ts';
import { itemFormatOf, itemListaServico } from '../../src/engines/abrasf-v2/messages.ts';
import { abrasfRequest } from '../../src/engines/abrasf-v2/transport.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import type { Credential } from '../../src/engines/routing/families.ts';
import { municipalityRegistry } from '../../src/engines/routing/municipality-registry.ts';
import { unmetProjectRequirements } from '../../src/engines/routing/requirements.ts';
import { CENTI_PROFILE } from '../../src/sandbox/abrasf-v2/centi.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Centi (ABRASF 2.02 in its own namespace over REST/JSON `{"xml", "usuario", "senha"}`, the RPS signed on its inner
 * Rps@Id, validated against Centi's schema) against its sandbox profile in Rio Verde/GO (5218805, a Centi city), a
 * Simples Nacional prestador. The business rejection: an RPS whose prestador is not the certificate's holder (E171).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '5218805',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '26543',
});
const stranger = { ...project, cnpj: '45723174000110' };
const servico = { descricao: 'Desenvolvimento de software', codigo: '010101', codigoTributacaoMunicipal: '001' };
const credentials = { municipalUser: 'usuario-centi', municipalPassword: 'senha-centi' };

describeConformance({
  family: defineAbrasfProvider(CENTI_CONFIG),
  project,
  invoice: () => normalized(project, { servico }),
  credentials,
  rejection: { project: stranger, invoice: normalized(stranger, { servico }), code: 'E171' },
  start: () => startAbrasfSandbox(CENTI_PROFILE, project),
});

describe('Centi wire facts', () => {
  const context = (url: string, withCredentials = true) =>
    ({
      ambiente: 2,
      municipality: '5218805',
      endpoints: { url: () => url },
      ...(withCredentials ? { credentials } : {}),
    }) as unknown as SendContext;

  it('posts {"xml", "usuario", "senha"} as JSON to the operation URL derived from the registry', () => {
    const registry = 'https://api.centi.com.br/nfe/consultar/homologacao/rps/go/rioverde';
    const emit = abrasfRequest(CENTI_CONFIG, 'emitSingle', '<GerarNfseEnvio/>', context(registry), 'emit');
    expect(emit.url).toBe('https://api.centi.com.br/nfe/gerar/homologacao/go/rioverde');
    expect(emit.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(String(emit.body))).toEqual({
      xml: '<GerarNfseEnvio/>',
      usuario: 'usuario-centi',
      senha: 'senha-centi',
    });
    const production = 'https://api.centi.com.br/nfe/cancelar/go/rioverde';
    expect(abrasfRequest(CENTI_CONFIG, 'queryByRps', '<x/>', context(production), 'query').url).toBe(
      'https://api.centi.com.br/nfe/consultar/rps/go/rioverde',
    );
    // a city with the one older service URL: ACBr posts every operation there
    const wcf = 'http://app.centi.com.br/adelandia/wcf/service/ServiceNfse.svc/ws';
    expect(abrasfRequest(CENTI_CONFIG, 'emitSingle', '<x/>', context(wcf), 'emit').url).toBe(wcf);
  });

  it('refuses to send without the user and password, and refuses what the schema cannot carry', () => {
    expect(() => abrasfRequest(CENTI_CONFIG, 'emitSingle', '<x/>', context('https://x/', false), 'emit')).toThrow(
      /municipalUser/,
    );
    const problems = CENTI_CONFIG.check!(
      project,
      normalized(project, { servico: { descricao: 'x', codigo: '010101' } }),
    );
    expect(problems.map((p) => p.field)).toEqual(['servico.codigoTributacaoMunicipal']);
  });

  it("writes ItemListaServico as Centi.GravarXml does: 4 digits where the city's NaoFormatarItemServico is set", () => {
    expect(itemFormatOf(CENTI_CONFIG, '5218805')).toBe('digits'); // Rio Verde: NaoFormatarItemServico
    expect(itemFormatOf(CENTI_CONFIG, '5211503')).toBe('digitsUnpadded'); // Itumbiara: no option
    expect(itemListaServico('01.05', 'digits')).toBe('0105');
    expect(itemListaServico('01.05', 'digitsUnpadded')).toBe('105');
    expect(itemListaServico('14.02', 'digitsUnpadded')).toBe('1402');
  });

  it('makes POST /emitir refuse a Centi project without the user and password (registry trait)', () => {
    const route = municipalityRegistry().find('5218805') ?? null;
    expect(route?.parameters?.credentials).toEqual(['certificate', 'municipalUser', 'municipalPassword']);
    const fields = { codigoMunicipio: '5218805', inscricaoMunicipal: '26543', cnae: null, codigoServicoSp: null };
    const unmet = unmetProjectRequirements(route, { fields, credentials: new Set<Credential>(['certificate']) });
    expect(unmet.map((u) => u.field)).toEqual(['project.basicAuthUsuario', 'project.basicAuthSenha']);
    const held = new Set<Credential>(['certificate', 'municipalUser', 'municipalPassword']);
    expect(unmetProjectRequirements(route, { fields, credentials: held })).toEqual([]);
  });
});
