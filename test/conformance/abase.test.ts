import { abaseDefinition } from '../../src/engines/dps-provider/abase.ts';
import { createAbaseService } from '../../src/sandbox/raw-xml/abase.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * ABase against its sandbox (homologation): a regime-1 provider in Santo Ângelo/RS (an ABase city) with the IBS/CBS
 * defaults, the project's Bearer token (`cscToken`) and the certificate on TLS. The sandbox holds each lot
 * EM_PROCESSAMENTO for 300 ms, so emission runs pending → polled (pending) → issued.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4317509',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: abaseDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { accessToken: 'abase-token-valido' },
  // a production DPS (tpAmb 1) sent to the homologation environment: E0006, at reception
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'abase',
      create: (deps) => createAbaseService(deps),
      settings: { path: '/__sandbox/abase/settings', body: { pendingMs: 300, tokens: ['abase-token-valido'] } },
    }),
});
