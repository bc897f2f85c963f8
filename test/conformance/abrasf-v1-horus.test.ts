import { describe, expect, it } from 'vitest';
import { horusNamespace } from '../../src/engines/abrasf-v1/providers/horus.ts';
import { UnknownEndpointError } from '../../src/engines/kit/family.ts';
import { createHorusService, HORUS_PROFILE } from '../../src/sandbox/abrasf-v1/horus.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * Horus (BH's ABRASF 1.00 schema; `<xml>` escaped in the operation element of the city's namespace, SOAPAction
 * namespace#operation; nothing signed; mutual TLS) against its sandbox, in Campina Verde/MG (3111101), a Simples
 * Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the provider's
 * schema. The business rejection: a lote whose prestador is not the certificate's holder (E157).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:horus',
  project: { codigoMunicipio: '3111101' },
  slug: HORUS_PROFILE.slug,
  service: createHorusService,
});

describe('Horus: the service namespace per city', () => {
  it("uses the training alias in homologation and the registry's AliasCidade in production", () => {
    expect(horusNamespace('3111101', 2)).toBe('http://teste.horusdm.com.br/service?wsdl');
    expect(horusNamespace('3121209', 1)).toBe('http://delfinopolis.horusdm.com.br/service?wsdl');
    expect(() => horusNamespace('3550308', 1)).toThrow(UnknownEndpointError);
  });
});
