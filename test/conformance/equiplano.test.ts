import { equiplanoDefinition } from '../../src/engines/own-layout/equiplano.ts';
import { createEquiplanoService } from '../../src/sandbox/own-layout/equiplano.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Equiplano's e-SNFS against its sandbox (homologation): a provider in Toledo/PR (idEntidade 136) presenting its A1
 * certificate on TLS and signing every message. The business rejection: a lot whose prestador is another CNPJ than
 * the certificate's (sandbox code 102).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4127700',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const other = { ...project, cnpj: '11222333000262' };

describeConformance({
  family: equiplanoDefinition,
  project,
  invoice: () => normalized(project),
  rejection: { project: other, invoice: normalized(other), code: '102' },
  start: () => startRawXmlSandbox({ project, slug: 'equiplano', create: (deps) => createEquiplanoService(deps) }),
});
