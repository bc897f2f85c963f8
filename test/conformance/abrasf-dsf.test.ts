import { describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { DSF_ASYNC_CONFIG, DSF_CONFIG } from '../../src/engines/abrasf-v2/providers/dsf.ts';
import { DSF_PROFILE } from '../../src/sandbox/abrasf-v2/dsf.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * DSF (ABRASF 2.03 in no namespace, the message inline in `<nfse:<Op>>`, SOAPAction "", signed queries, mutual TLS)
 * against the generic ABRASF sandbox in Belém/PA (1501402), with a 9-digit CNAE: once synchronous (GerarNfse), once
 * through the asynchronous lote (signed ConsultarLoteRps). The business rejection: an RPS whose prestador is not the
 * certificate's holder (E171; E157 for the lote).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1501402',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '1234567',
  cnae: '6201501',
});
const overrides = {
  servico: { descricao: 'Desenvolvimento de software\nsob encomenda', codigo: '010101', cnae: '620150100' },
};
const stranger = { ...project, cnpj: '45723174000110' };
const dsfFamily = defineAbrasfProvider(DSF_CONFIG);
const target = {
  project,
  invoice: () => normalized(project, overrides),
  rejection: { project: stranger, invoice: normalized(stranger, overrides), code: 'E171' },
};

describeConformance({ ...target, family: dsfFamily, start: () => startAbrasfSandbox(DSF_PROFILE, project) });

describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider(DSF_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(DSF_PROFILE, project, 0),
});

describe('DSF: the CNAE, in no namespace', () => {
  it('writes the 9-digit CNAE and no ABRASF namespace, and requires a CNAE', () => {
    const built = dsfFamily.declaration.build({
      project,
      invoice: normalized(project, overrides),
      serie: '1',
      number: 1,
      issuedAt: new Date(),
      certificate: null as never,
    });
    expect(built.xml).toContain('<CodigoCnae>620150100</CodigoCnae>');
    expect(built.xml).not.toContain('xmlns=');
    expect(built.xml).toContain('&#xD;\nsob encomenda');
    const bare = { ...project, cnae: null };
    expect(dsfFamily.check(bare, normalized(bare)).map((e) => e.field)).toContain('servico.cnae');
  });
});
