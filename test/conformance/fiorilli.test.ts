import { fiorilliDefinition } from '../../src/engines/dps-provider/fiorilli.ts';
import { createFiorilliService } from '../../src/sandbox/fiorilli/service.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Fiorilli (IssWeb Nacional, ACBr FiorilliAPIPropria101) against its sandbox (homologation): a regime-1 provider (IBS/CBS
 * defaults) in Assis/SP (a layout-1.01 city), the certificate on TLS (no credential is sent), SOAP `recepcionarDPS`, synchronous;
 * the cancellation is the national event at the provider, the reconciliation and the cancellation query are the
 * national view.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3504008',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: fiorilliDefinition,
  project,
  invoice: () => normalized(project),
  credentials: { basicAuthUsuario: 'ws-usuario', basicAuthSenha: 'ws-senha' },
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () => startRawXmlSandbox({ project, slug: 'fiorilli', create: (deps) => createFiorilliService(deps) }),
});
