import { bauhausDefinition } from '../../src/engines/own-layout/bauhaus.ts';
import { createBauhausService } from '../../src/sandbox/own-layout/bauhaus.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Bauhaus (Prefeitura Moderna) own JSON layout against its sandbox: a provider in Bragança/PA (1501709) with its
 * chave de autorização. The business rejection: a note whose inscrição municipal is not the key's (010).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1501709',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const wrongRegistration = { ...project, inscricaoMunicipal: '99999' };
const servico = {
  descricao: 'Desenvolvimento de software sob encomenda',
  codigo: '010101',
  codigoTributacaoMunicipal: '001',
};

describeConformance({
  family: bauhausDefinition,
  project,
  invoice: () => normalized(project, { servico }),
  credentials: { authorizationKey: 'chave-bauhaus' },
  rejection: { project: wrongRegistration, invoice: normalized(wrongRegistration, { servico }), code: '010' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'own-layout-bauhaus',
      create: (deps) => createBauhausService(deps),
      settings: {
        path: '/__sandbox/own-layout-bauhaus/settings',
        body: { keys: { 'chave-bauhaus': { inscricaoMunicipal: '12345' } } },
      },
    }),
});
