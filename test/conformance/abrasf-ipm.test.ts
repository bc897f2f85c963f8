import { describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { IPM_ASYNC_CONFIG, IPM_CONFIG } from '../../src/engines/abrasf-v2/providers/ipm.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import { createIpmAbrasfService, IPM_ABRASF_PROFILE } from '../../src/sandbox/abrasf-v2/ipm.ts';
import type { AbrasfSandboxProfile } from '../../src/sandbox/abrasf-v2/profiles.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized } from './abrasf-env.ts';
import { startWrappedAbrasfSandbox } from './abrasf-wrapped-env.ts';
import { describeConformance } from './suite.ts';

/**
 * IPM's ABRASF 2.04 (atende.net: `<net:<root>>` around the unqualified message, SOAPAction `net.atende#<root>`, HTTP
 * Basic, nothing signed, EnvioTeste in homologation) against its sandbox in Araucária/PR (4101804, an IPM 2.04 city),
 * synchronous (GerarNfse), then through the asynchronous lote. The business rejection: a taxpayer the provider knows
 * with another login (E179).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4101804',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };
const profile: AbrasfSandboxProfile = {
  ...IPM_ABRASF_PROFILE,
  knownCredentials: { [stranger.cnpj]: { username: stranger.cnpj, password: 'outra-senha' } },
};

const target = {
  project,
  invoice: () => normalized(project),
  credentials: { basicAuthUsuario: project.cnpj, basicAuthSenha: 'senha-atende' },
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E179' },
  start: () => startWrappedAbrasfSandbox(profile, project, createIpmAbrasfService),
};

describeConformance({ ...target, family: defineAbrasfProvider(IPM_CONFIG) });
describeConformance({ ...target, family: defineAbrasfProvider(IPM_ASYNC_CONFIG) });

describe('IPM 2.04: the atende.net idiom', () => {
  it('sends the message children unqualified inside net:<root>, EnvioTeste only in homologation', () => {
    const ns = 'xmlns="http://www.abrasf.org.br/nfse.xsd"';
    const message = `<GerarNfseEnvio ${ns}><Rps ${ns}><InfDeclaracaoPrestacaoServico Id="R1"/></Rps></GerarNfseEnvio>`;
    const context = (ambiente: 1 | 2) => ({ ambiente }) as SendContext;
    const homologation = IPM_CONFIG.hooks!.message!('emitSingle', message, context(2));
    expect(homologation).toBe(
      '<net:GerarNfseEnvio xmlns:net="net.atende"><EnvioTeste>1</EnvioTeste><Rps><InfDeclaracaoPrestacaoServico/></Rps></net:GerarNfseEnvio>',
    );
    expect(IPM_CONFIG.hooks!.message!('emitSingle', message, context(1))).not.toContain('EnvioTeste');
    expect(IPM_CONFIG.hooks!.message!('emitSingle', message, null)).toBe(message);
  });
});
