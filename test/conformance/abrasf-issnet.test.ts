import { describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { ISSNET_ASYNC_CONFIG, ISSNET_CONFIG } from '../../src/engines/abrasf-v2/providers/issnet.ts';
import { ISSNET_PROFILE } from '../../src/sandbox/abrasf-v2/issnet.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * ISSNet (ABRASF 2.04: `<Op>{nfseCabecMsg, nfseDadosMsg}` with raw child XML, `<Op>Result` answers, `Pedido`-wrapped
 * signed queries, every signature with `URI=""`, mutual TLS) against the generic ABRASF sandbox in Brasília/DF
 * (5300108), with the CNAE and what spec 4.8 requires there: once synchronous (GerarNfse), once through the
 * asynchronous lote. The business rejection: an RPS whose prestador is not the certificate's holder (E171; E157 for
 * the lote, signed by someone else than its CNPJ).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '5300108',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '0734567800',
  cnae: '6201501',
});
const overrides = {
  servico: { descricao: 'Desenvolvimento de software', codigo: '010101', codigoTributacaoMunicipal: '001' },
};
const stranger = { ...project, cnpj: '45723174000110' };
const issnetFamily = defineAbrasfProvider(ISSNET_CONFIG);
const target = {
  project,
  invoice: () => normalized(project, overrides),
  rejection: { project: stranger, invoice: normalized(stranger, overrides), code: 'E171' },
};

describeConformance({ ...target, family: issnetFamily, start: () => startAbrasfSandbox(ISSNET_PROFILE, project) });

describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider(ISSNET_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(ISSNET_PROFILE, project, 0),
});

describe('ISSNet Brasília: CNAE and the spec 4.8 requirements, refused before a number is spent', () => {
  it('names each missing field', () => {
    const bare = { ...project, cnae: null };
    const invoice = normalized(bare, {
      tomador: { cnpj: '11444777000161', nome: 'Cliente Tomador SA' },
      valores: { total: 100, aliquotaIss: 2, issRetido: true },
    });
    const fields = issnetFamily.check(bare, invoice).map((e) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'servico.cnae',
        'servico.codigoTributacaoMunicipal',
        'tomador.endereco',
        'tomador.inscricaoMunicipal',
      ]),
    );
    expect(issnetFamily.check({ ...project, codigoMunicipio: '5208707' }, invoice)).toEqual([]);
  });
});
