import { ipmDefinition } from '../../src/engines/ipm/definition.ts';
import { createIpmService } from '../../src/sandbox/ipm/service.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
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
  defaultNbs: '115021000',
  defaultIndicadorOperacao: '100301',
  defaultClassificacaoTributaria: '000001',
  defaultCstIbscbs: '000',
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
