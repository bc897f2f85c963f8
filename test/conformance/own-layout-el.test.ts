import { elLegacyDefinition } from '../../src/engines/own-layout/el.ts';
import { createElLegacyService } from '../../src/sandbox/own-layout/el.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * E&L's legacy RpsServiceService (own layout) against its sandbox: a provider in Carangola/MG (3113305, one of the 24
 * cities on that service) with its web-service password. The lote is held 0 ms: the emission answers `pending` with
 * a numeroProtocolo and the first ConsultarSituacaoLoteRps processes it. The business rejection: a lote whose
 * inscrição municipal is not the one registered for the CNPJ (E50).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3113305',
  inscricaoMunicipal: '12345',
  email: 'fiscal@empresa.com.br',
  ...IBS_CBS_FRAMING,
});
const wrongRegistration = { ...project, inscricaoMunicipal: '99999' };

describeConformance({
  family: elLegacyDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { municipalPassword: 'senha-el' },
  rejection: { project: wrongRegistration, invoice: normalized(wrongRegistration), code: 'E50' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'own-layout-el',
      create: (deps) => createElLegacyService(deps),
      settings: {
        path: '/__sandbox/own-layout-el/settings',
        body: { users: { [project.cnpj]: { senha: 'senha-el', inscricaoMunicipal: '12345' } } },
      },
    }),
});
