import { describe, expect, it } from 'vitest';
import { ABRASF_V2_DEFINITIONS, defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { FINTELISS_CONFIG, servesFintelIss200 } from '../../src/engines/abrasf-v2/providers/finteliss.ts';
import { abrasfRequest } from '../../src/engines/abrasf-v2/transport.ts';
import type { SendContext } from '../../src/engines/kit/family.ts';
import { FINTELISS_PROFILE } from '../../src/sandbox/abrasf-v2/finteliss.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox, strangerRejectionTarget } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * fintelISS in Juiz de Fora/MG (3136702; ACBr's fintelISS200 layout: `<web:<Op>>{web:cabecalho, web:xml}` in
 * `http://www.fintel.com.br/WebService`, `<Op>Result` answers, RPS/lote/cancellation signed, mutual TLS, the city's
 * nfseV202.xsd) against its sandbox profile, a Simples Nacional prestador, synchronous (GerarNfse) and through the
 * asynchronous lote. The business rejection: an RPS whose prestador is not the signer (E171; lote: E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3136702',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '1234567',
});
const target = strangerRejectionTarget(project, 'E171', () => startAbrasfSandbox(FINTELISS_PROFILE, project, 0));
describeConformance({ ...target, family: ABRASF_V2_DEFINITIONS['abrasf-v2:finteliss']! });
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider({ ...FINTELISS_CONFIG, emission: 'emitAsyncBatch' }),
});

describe('fintelISS: the cities and the idiom of its fintelISS200 layout', () => {
  it('serves only the registry cities on that layout (Juiz de Fora), not the 2.02/2.04 ones', () => {
    expect(servesFintelIss200('3136702')).toBe(true);
    for (const other of ['3303609', '3523404', '3534708']) expect(servesFintelIss200(other)).toBe(false);
    expect(ABRASF_V2_DEFINITIONS['abrasf-v2:finteliss']!.serves?.('3534708')).toBe(false);
  });

  it('writes <web:Op> with the qualified escaped web:cabecalho and web:xml strings and the fintel SOAPAction', () => {
    const context = {
      municipality: '3136702',
      ambiente: 2,
      endpoints: { url: () => 'https://sandbox.test/WebService.asmx' },
      credentials: {},
    } as unknown as SendContext;
    const sent = abrasfRequest(FINTELISS_CONFIG, 'queryRange', '<ConsultarNfseFaixaEnvio/>', context, 'query');
    expect(JSON.stringify(sent.headers)).toContain('http://www.fintel.com.br/WebService/ConsultarNfseFaixa');
    expect(sent.body).toMatch(/<(\w+):ConsultarNfseFaixa xmlns:\1="http:\/\/www\.fintel\.com\.br\/WebService">/);
    expect(sent.body).toMatch(/<(\w+):cabecalho>&lt;cabecalho versao="2\.02"/);
    expect(sent.body).toMatch(/<(\w+):xml>&lt;ConsultarNfseFaixaEnvio\/&gt;<\/\1:xml>/);
  });
});
