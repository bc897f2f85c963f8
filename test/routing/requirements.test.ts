import { describe, expect, it } from 'vitest';
import type { Credential } from '../../src/engines/routing/families.ts';
import { municipalityRegistry } from '../../src/engines/routing/municipality-registry.ts';
import { unmetProjectRequirements } from '../../src/engines/routing/requirements.ts';

/** Spec 4.8: what an engine needs from the project, refused before an invoice is accepted, naming the field. */
const registry = municipalityRegistry();
const route = (code: string) => registry.find(code) ?? null;
const noFields = { codigoMunicipio: null, inscricaoMunicipal: null, cnae: null, codigoServicoSp: null };

describe('engine requirements of the project (spec 4.8)', () => {
  it("names São Paulo's service code and the municipal registration when the project lacks them", () => {
    const unmet = unmetProjectRequirements(route('3550308'), {
      fields: { ...noFields, codigoMunicipio: '3550308' },
      credentials: new Set<Credential>(['certificate']),
    });
    expect(unmet.map((u) => u.field)).toEqual(['project.inscricaoMunicipal', 'project.codigoServicoSp']);
    expect(unmet[0]!.message).toContain('São Paulo/SP (ISSSaoPaulo)');
  });

  it('names the Basic Auth fields of an IPM city, once each, and is satisfied when the project holds them', () => {
    const ipm = route('3107406');
    const fields = { ...noFields, codigoMunicipio: '3107406', inscricaoMunicipal: '123' };
    expect(unmetProjectRequirements(ipm, { fields, credentials: new Set() }).map((u) => u.field)).toEqual([
      'project.basicAuthUsuario',
      'project.basicAuthSenha',
    ]);
    const held = new Set<Credential>(['basicAuthUsuario', 'basicAuthSenha']);
    expect(unmetProjectRequirements(ipm, { fields, credentials: held })).toEqual([]);
  });

  it('asks a token engine for the project token (cscToken) once, whatever the credential is called', () => {
    const unmet = unmetProjectRequirements(route('2500403'), {
      fields: { ...noFields, codigoMunicipio: '2500403', inscricaoMunicipal: '1' },
      credentials: new Set<Credential>(['certificate']),
    });
    expect(unmet.map((u) => u.field)).toEqual([
      'project.basicAuthUsuario',
      'project.basicAuthSenha',
      'project.cscToken',
    ]);
  });

  it("asks E&L's legacy cities for the web-service password (not its ABRASF cities), Bauhaus for its key", () => {
    const fields = { ...noFields, codigoMunicipio: '1', inscricaoMunicipal: '1' };
    const legacy = unmetProjectRequirements(route('2932507'), { fields, credentials: new Set() });
    expect(legacy.map((u) => u.field)).toEqual(['project.basicAuthSenha']);
    expect(route('2932507')?.parameters?.credentials).toEqual(['municipalPassword']);
    expect(route('1100205')?.parameters?.credentials).toEqual(['certificate']); // Porto Velho, EL ABRASF 2.04
    const bauhaus = unmetProjectRequirements(route('1501709'), { fields, credentials: new Set() });
    expect(bauhaus.map((u) => u.field)).toEqual(['project.cscToken']);
  });

  it('asks nothing of an unrouted or national municipality beyond the certificate', () => {
    expect(unmetProjectRequirements(null, { fields: noFields, credentials: new Set() })).toEqual([]);
    const florianopolis = route('4205407');
    expect(
      unmetProjectRequirements(florianopolis, {
        fields: { ...noFields, codigoMunicipio: '4205407' },
        credentials: new Set(),
      }),
    ).toEqual([]);
  });
});
