import { agiliDefinition } from '../../src/engines/own-layout/agili.ts';
import { createAgiliService } from '../../src/sandbox/own-layout/agili.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
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
  defaultNbs: '115021000',
  defaultIndicadorOperacao: '100301',
  defaultClassificacaoTributaria: '000001',
  defaultCstIbscbs: '000',
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
