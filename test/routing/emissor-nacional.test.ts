import { describe, expect, it } from 'vitest';
import { coverageOf } from '../../src/engines/routing/coverage.ts';
import { municipalityRegistry } from '../../src/engines/routing/municipality-registry.ts';
import {
  nationalEmitterByChoice,
  nationalEmitterChoiceProblem,
  type RoutingInput,
  routeProject,
} from '../../src/engines/routing/route.ts';

/**
 * The national emitter by the project's choice (issue #13, project field `emissorNacional`): routing is a pure
 * function of the registry entry, the regime, the choice and the engines implemented.
 */
const registry = municipalityRegistry();
const NATIONAL_ONLY = new Set(['national']);

const ARROIO_DO_MEIO = '4301008'; // Tecnos (abrasf-v2, not implemented), in the adhesion list
const GUARABIRA = '2506301'; // Elmar (abrasf-v2, not implemented), not in the adhesion list
const RIO = '3304557'; // PadraoNacional, in the adhesion list
const SAO_PAULO = '3550308'; // its own engine (implemented), in the adhesion list
const CITTA_HOMOLOGATION_ONLY = '4300471'; // Citta API Própria, no production web service (not_covered), adherent

const route = (
  codigoMunicipio: string,
  regimeTributario: RoutingInput['regimeTributario'],
  emissorNacional: boolean,
  implemented: ReadonlySet<string> = NATIONAL_ONLY,
) => routeProject({ codigoMunicipio, regimeTributario, emissorNacional }, registry, implemented);

describe('routing: the national emitter by the choice of the project (emissorNacional)', () => {
  it('the registry entries the tests rely on are what they say', () => {
    expect(registry.find(ARROIO_DO_MEIO)).toMatchObject({
      provider: 'Tecnos',
      family: 'abrasf-v2',
      nationalEmitter: true,
    });
    expect(registry.find(GUARABIRA)).toMatchObject({ provider: 'Elmar', family: 'abrasf-v2', nationalEmitter: false });
    expect(registry.find(CITTA_HOMOLOGATION_ONLY)).toMatchObject({ provider: 'Citta', nationalEmitter: true });
  });

  it('an adherent municipality whose own provider is not implemented: national for every regime with the choice', () => {
    for (const regime of ['1', '3', '3e', null] as const) {
      expect(route(ARROIO_DO_MEIO, regime, false)).toMatchObject({ ok: false, family: 'abrasf-v2', status: 'covered' });
      expect(route(ARROIO_DO_MEIO, regime, true)).toMatchObject({
        ok: true,
        family: 'national',
        engine: 'national',
        reason: 'national-emitter-choice',
      });
    }
    // a provider without a production web service (not_covered) is no obstacle to the choice either
    expect(route(CITTA_HOMOLOGATION_ONLY, '1', true)).toMatchObject({ ok: true, reason: 'national-emitter-choice' });
  });

  it('the choice wins over an own provider that is implemented, and changes nothing where national is the default', () => {
    const withTecnos = new Set(['national', 'abrasf-v2:tecnos']);
    expect(route(ARROIO_DO_MEIO, '3', false, withTecnos)).toMatchObject({ ok: true, engine: 'abrasf-v2:tecnos' });
    expect(route(ARROIO_DO_MEIO, '3', true, withTecnos)).toMatchObject({
      ok: true,
      engine: 'national',
      reason: 'national-emitter-choice',
    });
    const withSaoPaulo = new Set(['national', 'sao-paulo:isssaopaulo']);
    expect(route(SAO_PAULO, '1', true, withSaoPaulo)).toMatchObject({ ok: true, reason: 'national-emitter-choice' });
    expect(route(RIO, '1', true)).toMatchObject({ ok: true, engine: 'national', reason: 'national-adherent' });
    // MEI goes to the national environment whatever the choice
    expect(route(GUARABIRA, '2', true)).toMatchObject({ ok: true, engine: 'national', reason: 'mei' });
  });

  it('a municipality outside the adhesion list refuses the choice, naming the field, and never falls back to its own engine', () => {
    const withElmar = new Set(['national', 'abrasf-v2:elmar']);
    expect(route(GUARABIRA, '3', false, withElmar)).toMatchObject({ ok: true, engine: 'abrasf-v2:elmar' });
    for (const implemented of [NATIONAL_ONLY, withElmar]) {
      const refused = route(GUARABIRA, '3', true, implemented);
      expect(refused).toMatchObject({ ok: false, family: 'national', field: 'emissorNacional' });
      expect(!refused.ok && refused.message).toContain(
        'Guarabira/PB (2506301) does not adhere to the national emitter',
      );
    }
  });

  it('the refusal of an unimplemented own provider tells the caller about the choice only where it is available', () => {
    const arroio = route(ARROIO_DO_MEIO, '3', false);
    expect(arroio).toMatchObject({ ok: false, field: 'codigoMunicipio' });
    expect(!arroio.ok && arroio.message).toContain("set the project's emissorNacional to true");
    const guarabira = route(GUARABIRA, '3', false);
    expect(!guarabira.ok && guarabira.message).not.toContain('emissorNacional');
  });

  it('what the lookup and the validation say about the choice', () => {
    const find = (code: string) => registry.find(code)!;
    expect(nationalEmitterByChoice(find(ARROIO_DO_MEIO))).toBe(true);
    expect(nationalEmitterByChoice(find(SAO_PAULO))).toBe(true);
    expect(nationalEmitterByChoice(find(RIO))).toBe(false); // the default already
    expect(nationalEmitterByChoice(find(GUARABIRA))).toBe(false);
    expect(coverageOf(find(ARROIO_DO_MEIO), registry, NATIONAL_ONLY)).toMatchObject({
      implemented: false,
      nationalEmitterAdherent: true,
      nationalEmitterByChoice: true,
    });
    expect(nationalEmitterChoiceProblem(ARROIO_DO_MEIO, find(ARROIO_DO_MEIO))).toBeNull();
    expect(nationalEmitterChoiceProblem(GUARABIRA, find(GUARABIRA))).toContain(
      'does not adhere to the national emitter',
    );
    expect(nationalEmitterChoiceProblem(null, null)).toContain('needs a codigoMunicipio');
  });
});
