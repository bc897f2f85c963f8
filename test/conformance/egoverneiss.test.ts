import { eGoverneIssDefinition } from '../../src/engines/own-layout/egoverneiss.ts';
import { createEGoverneIssService } from '../../src/sandbox/own-layout/egoverneiss.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * eGoverneISS (Osasco/SP) against its sandbox (homologation): a provider outside the Simples Nacional with its access
 * key (`ChaveAutenticacao`, the project's `accessToken`). The business rejection: the same key sending a note that
 * declares the Simples Nacional while the key's taxpayer is registered outside it.
 */
const KEY = '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b';
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3534401',
  inscricaoMunicipal: '123456',
  ...IBS_CBS_FRAMING,
});
const simples = { ...project, regimeTributario: '3' as const };

describeConformance({
  family: eGoverneIssDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { accessToken: KEY },
  rejection: { project: simples, invoice: normalized(simples), code: 'EGOVERNEISS' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'egoverneiss',
      create: (deps) => createEGoverneIssService(deps),
      settings: { path: '/__sandbox/egoverneiss/settings', body: { keys: { [KEY]: { simplesNacional: false } } } },
    }),
});
