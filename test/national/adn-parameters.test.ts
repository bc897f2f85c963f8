import { describe, expect, it } from 'vitest';
import {
  ADN_PARAMETERS_LIVE_URLS,
  aliquotaPath,
  convenioPath,
  readConvenio,
  readRate,
} from '../../src/engines/national/adn-parameters.ts';
import { breakdownTextOf } from '../../src/invoices/municipal-parameters.ts';

/** Reading the ADN "Parâmetros Municipais" answers (official shapes of the OpenAPI), table-driven. */

describe('ADN parametrização paths', () => {
  it('builds the official paths below /parametrizacao', () => {
    expect(ADN_PARAMETERS_LIVE_URLS).toEqual({
      1: 'https://adn.nfse.gov.br/parametrizacao',
      2: 'https://adn.producaorestrita.nfse.gov.br/parametrizacao',
    });
    expect(convenioPath('3304557')).toBe('3304557/convenio');
    expect(aliquotaPath('4106902', '01.01.01.000', '2025-10')).toBe('4106902/01.01.01.000/2025-10-01/aliquota');
  });
});

describe('readRate', () => {
  // the answer the real produção restrita gave for Curitiba (forum.nfsebrasil.com.br, topic 278)
  const curitiba = {
    aliquotas: { '01.01.01.000': [{ Incidencia: 'SIM', Aliq: 5.0, DtIni: '2022-12-30T00:00:00', DtFim: null }] },
    mensagem: 'Alíquotas recuperadas com sucesso.',
  };
  it.each([
    ['official answer', curitiba, '01.01.01.000', { aliquota: 5, incidencia: 'SIM', inicio: '2022-12-30', fim: null }],
    ['another code of the map', curitiba, '01.01.01.001', null],
    [
      'camelCase keys',
      { aliquotas: { X: [{ aliq: 2, incidencia: 'SIM', dtIni: '2024-01-01', dtFim: '2024-12-31' }] } },
      'X',
      { aliquota: 2, incidencia: 'SIM', inicio: '2024-01-01', fim: '2024-12-31' },
    ],
    [
      'latest start wins',
      {
        aliquotas: {
          X: [
            { Aliq: 3, DtIni: '2023-01-01T00:00:00' },
            { Aliq: 2, DtIni: '2026-01-01T00:00:00' },
          ],
        },
      },
      'X',
      { aliquota: 2, incidencia: null, inicio: '2026-01-01', fim: null },
    ],
    [
      'Aliq null',
      { aliquotas: { X: [{ Aliq: null, DtIni: '2023-01-01T00:00:00' }] } },
      'X',
      { aliquota: null, incidencia: null, inicio: '2023-01-01', fim: null },
    ],
    ['aliquotas null (404 shape)', { mensagem: 'x', aliquotas: null }, 'X', null],
    ['empty list', { aliquotas: { X: [] } }, 'X', null],
    ['no body', null, 'X', null],
  ] as const)('%s', (_name, body, code, expected) => {
    expect(readRate(body as Record<string, unknown> | null, code)).toEqual(expected);
  });
});

describe('readConvenio', () => {
  it.each([
    [
      { parametrosConvenio: { aderenteAmbienteNacional: 1, aderenteEmissorNacional: 0 } },
      { aderenteAmbienteNacional: true, aderenteEmissorNacional: false },
    ],
    [
      { parametrosConvenio: { aderenteAmbienteNacional: -1 } },
      { aderenteAmbienteNacional: null, aderenteEmissorNacional: null },
    ],
    [{ parametrosConvenio: null }, null],
    [null, null],
  ] as const)('%j', (body, expected) => {
    expect(readConvenio(body as Record<string, unknown> | null)).toEqual(expected);
  });
});

describe('breakdownTextOf (xTribMun learned from an NFS-e)', () => {
  const nfse = (xTribMun: string | null, cTribMun: string | null = '001') =>
    `<NFSe><infNFSe><cLocIncid>3304557</cLocIncid><xTribNac>Análise</xTribNac>${
      xTribMun === null ? '' : `<xTribMun>${xTribMun}</xTribMun>`
    }<DPS><infDPS><serv><cServ><cTribNac>010101</cTribNac>${
      cTribMun === null ? '' : `<cTribMun>${cTribMun}</cTribMun>`
    }</cServ></serv></infDPS></DPS></infNFSe></NFSe>`;
  it.each([
    [
      'text',
      nfse('Consultoria &amp; análise'),
      { municipio: '3304557', cTribNac: '010101', cTribMun: '001', descricao: 'Consultoria & análise' },
    ],
    [
      'numeric entity',
      nfse('Servi&#231;o'),
      { municipio: '3304557', cTribNac: '010101', cTribMun: '001', descricao: 'Serviço' },
    ],
    ['no xTribMun', nfse(null), null],
    ['no cTribMun', nfse('x', null), null],
  ] as const)('%s', (_name, xml, expected) => {
    expect(breakdownTextOf(xml)).toEqual(expected);
  });
});
