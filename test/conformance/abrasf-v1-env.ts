import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import type { AbrasfV1SandboxOptions } from '../../src/sandbox/abrasf-v1/service.ts';
import type { SandboxService } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/** A sandbox's dependencies in a conformance run: quiet, the clock, lotes processed at the first poll. */
export function conformanceSandboxOptions(deps: { signer: AbrasfV1SandboxOptions['signer']; dataDir: string }) {
  return { ...deps, now: () => new Date(), logger: { info: () => {}, warn: () => {} }, holdMs: 0 };
}

/**
 * The conformance run every ABRASF 1.00 provider takes against its sandbox: a Simples Nacional provider (inscrição
 * 123456, 5 %) in the provider's city, and the business rejection of a lote whose prestador is not the certificate's
 * holder or signer (E157 unless told). Returns the project and that stranger for the provider's own tests.
 */
export function describeAbrasfV1Conformance(options: {
  /** the engine key, e.g. `abrasf-v1:webiss` */
  engine: string;
  /** the city and what the provider's project needs beyond the standard one */
  project: Partial<ProjectFiscalProfile>;
  /** the sandbox's slug (its profile's) */
  slug: string;
  /** the sandbox service from its dependencies (and the project, for a register of prestadores) */
  service: (options: AbrasfV1SandboxOptions, project: ProjectFiscalProfile) => SandboxService;
  /** the code of the stranger's rejection (default E157) */
  rejectionCode?: string;
}) {
  const family = ABRASF_V1_DEFINITIONS[options.engine];
  if (!family) throw new Error(`unknown engine ${options.engine}`);
  const project = fiscalProfile({
    ambiente: 2,
    regimeTributario: '3',
    aliquotaSimples: 5,
    inscricaoMunicipal: '123456',
    ...options.project,
  });
  const stranger = { ...project, cnpj: '45723174000110' };
  describeConformance({
    family,
    project,
    invoice: () => normalizedInvoice(project),
    rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: options.rejectionCode ?? 'E157' },
    start: () =>
      startProviderSandbox({
        slug: options.slug,
        project,
        service: (deps) => options.service(conformanceSandboxOptions(deps), project),
      }),
  });
  return { project, stranger };
}
