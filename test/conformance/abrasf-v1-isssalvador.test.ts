import { describe, expect, it } from 'vitest';
import { ISSSALVADOR_CONFIG } from '../../src/engines/abrasf-v1/providers/isssalvador.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { ISSSALVADOR_PROFILE } from '../../src/sandbox/abrasf-v1/isssalvador.ts';
import { IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * ISSSalvador (ABRASF 1.00 on WCF, asynchronous lotes, RPS and lote signed, mutual TLS) against its sandbox, in
 * Salvador/BA (2927408), a Simples Nacional provider with its IBS/CBS framing as project defaults (Salvador's 2026
 * schema requires NBS, cClassTrib and INDOP). The sandbox holds a lote for `holdMs` = 0: the emission answers
 * `pending` with a Protocolo, the first ConsultarSituacaoLoteRps processes it (Situacao 4) and ConsultarLoteRps returns
 * the NFS-e. No cancellation (Salvador cancels by administrative process only). The business rejection: a lote whose
 * prestador is not the certificate's holder (E157, refused at reception).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:isssalvador',
  project: {
    codigoMunicipio: '2927408',
    inscricaoMunicipal: '1234567',
    cnae: '6201501',
    ...IBS_CBS_FRAMING,
  },
  slug: ISSSALVADOR_PROFILE.slug,
  service: (options) => createAbrasfV1Service(ISSSALVADOR_PROFILE, options),
});

describe('ISSSalvador: one WCF service per operation (live URLs)', () => {
  it("rewrites the registry's EnvioLoteRPS URL per operation, and leaves any other base (the sandbox's) alone", () => {
    const base = 'https://nfse.salvador.ba.gov.br/rps/ENVIOLOTERPS/EnvioLoteRPS.svc';
    const url = ISSSALVADOR_CONFIG.operationUrl!;
    expect(url(base, 'recepcionar')).toBe(base);
    expect(url(base, 'consultarSituacao')).toBe(
      'https://nfse.salvador.ba.gov.br/rps/CONSULTASITUACAOLOTERPS/ConsultaSituacaoLoteRPS.svc',
    );
    expect(url(base, 'consultarLote')).toBe('https://nfse.salvador.ba.gov.br/rps/CONSULTALOTERPS/ConsultaLoteRPS.svc');
    expect(url(base, 'consultarPorRps')).toBe(
      'https://nfse.salvador.ba.gov.br/rps/CONSULTANFSERPS/ConsultaNfseRPS.svc',
    );
    expect(url('https://127.0.0.1:1/municipal/isssalvador/producaorestrita', 'consultarLote')).toBe(
      'https://127.0.0.1:1/municipal/isssalvador/producaorestrita',
    );
  });
});
