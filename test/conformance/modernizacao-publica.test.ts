import { modernizacaoPublicaDefinition } from '../../src/engines/dps-provider/modernizacao-publica.ts';
import { createModernizacaoPublicaService } from '../../src/sandbox/raw-xml/modernizacao-publica.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Modernização Pública against its sandbox (homologation): a regime-1 provider in Belford Roxo/RJ with the IBS/CBS
 * defaults, the project's Basic credentials and the certificate on TLS. No cancellation (none documented); the
 * reconciliation is the national view (GET /dps/{id}, /nfse/{chave}).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3300456',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: modernizacaoPublicaDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { basicAuthUsuario: 'ws-usuario', basicAuthSenha: 'ws-senha' },
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'modernizacaopublica',
      create: (deps) => createModernizacaoPublicaService(deps),
      settings: {
        path: '/__sandbox/modernizacaopublica/settings',
        body: { users: [{ user: 'ws-usuario', password: 'ws-senha' }] },
      },
    }),
});
