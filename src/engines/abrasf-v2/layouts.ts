import { signXml } from '../../xml/sign.ts';
import type { SchemaName } from '../../xml/xsd.ts';
import type { FamilyDefinition, Operation, SendContext } from '../kit/family.ts';
import type { PrepareInput } from '../types.ts';
import type { AbrasfProviderConfig } from './config.ts';

/**
 * Layout versions of the ABRASF 2.0x base that the kit's one-element signer does not cover by itself, and providers
 * whose cities take different layouts (`config.layouts`). Generic: nothing here names a provider.
 */

const SIGNATURE_ALGORITHM = 'rsa-sha1';

type Key = { privateKey: PrepareInput['certificate']['privateKey']; certificatePem: string };

export const keyOf = (certificate: PrepareInput['certificate']): Key => ({
  privateKey: certificate.privateKey,
  certificatePem: certificate.certPem,
});

/** An RPS in the official 2.00 layout: no Id on InfDeclaracaoPrestacaoServico (nfse v2.00 XSD, tcInfDeclaracao…). */
export const isLayout200 = (rpsXml: string) => rpsXml.includes('<InfDeclaracaoPrestacaoServico>');

/**
 * Signs an RPS of the 2.00 layout: the Reference is `#Id` of its inner Rps (tcInfRps, the one element carrying an Id;
 * ACBr's 2.00 writers: GerarIDDeclaracao False, GerarIDRps True) and the Signature sits where the XSD puts it
 * (tcDeclaracaoPrestacaoServico: after InfDeclaracaoPrestacaoServico). The inner Rps is signed in a wrapper of the same
 * namespace scope (its canonical form is then the one it has in the RPS) and the Signature is moved into place.
 */
export function signRps200(rpsXml: string, dataNamespace: string | null, key: Key): string {
  const inner = /<Rps Id="[^"]*">[\s\S]*?<\/Rps>/.exec(rpsXml)?.[0];
  if (!inner) throw new Error('signRps200: no <Rps Id> in the declaration');
  const ns = dataNamespace ? ` xmlns="${dataNamespace}"` : '';
  const signed = signXml(`<W${ns}>${inner}</W>`, { elementName: 'Rps', key, algorithm: SIGNATURE_ALGORITHM });
  const signature = /<Signature [\s\S]*<\/Signature>/.exec(signed)?.[0] ?? '';
  const end = rpsXml.lastIndexOf('</Rps>');
  return rpsXml.slice(0, end) + signature + rpsXml.slice(end);
}

/** A request/parse operation chosen per call by the send context's municipality. */
export function dispatch<In, Out>(pick: (context: SendContext) => Operation<In, Out> | undefined): Operation<In, Out> {
  const of = (context: SendContext) => {
    const operation = pick(context);
    if (!operation || !('request' in operation)) throw new Error('abrasf-v2 layouts: operation missing for the city');
    return operation;
  };
  return {
    request: (input, context) => of(context).request(input, context),
    parse: (answer, input, context) => of(context).parse(answer, input, context),
  };
}

/**
 * The definition of a provider with a layout per city: one definition per layout (the configuration with that
 * `version` and `schema`), chosen by the city of each message. The declaration is signed here, per layout (the kit's
 * signer is static), and validated against its layout's XSD (`schemaFor`).
 */
export function perCityLayouts(
  config: AbrasfProviderConfig,
  define: (config: AbrasfProviderConfig) => FamilyDefinition,
): FamilyDefinition {
  const layouts = config.layouts!;
  const definitions = new Map<string, FamilyDefinition>();
  const schemaOf = (version: AbrasfProviderConfig['version']): SchemaName => layouts.schemas[version] ?? config.schema;
  const definitionOf = (city: string | null) => {
    const version = layouts.versionOf(city);
    let definition = definitions.get(version);
    if (!definition) {
      definition = define({ ...config, layouts: undefined, version, schema: schemaOf(version) });
      definitions.set(version, definition);
    }
    return definition;
  };
  const fallback = definitionOf(null);
  const later = (Object.keys(layouts.schemas) as AbrasfProviderConfig['version'][]).find((v) => v !== '2.00');
  const byContext = (context: SendContext) => definitionOf(context.municipality).operations;
  const cancel = fallback.operations.cancel;
  return {
    ...fallback,
    layout: `ABRASF ${Object.keys(layouts.schemas).join('/')} per city (${config.provider})`,
    declaration: {
      ...fallback.declaration,
      build(input) {
        const declaration = definitionOf(input.project.codigoMunicipio).declaration;
        const built = declaration.build(input);
        if (!declaration.signedElement) return built;
        const xml = signXml(built.xml, {
          elementName: declaration.signedElement,
          key: keyOf(input.certificate),
          algorithm: SIGNATURE_ALGORITHM,
        });
        return { id: built.id, xml };
      },
      signedElement: null,
      schemaFor: (signed) => schemaOf(isLayout200(signed) ? '2.00' : (later ?? config.version)),
    },
    operations: {
      emit: dispatch((context) => byContext(context).emit),
      ...(fallback.operations.poll ? { poll: dispatch((context) => byContext(context).poll) } : {}),
      query: dispatch((context) => byContext(context).query),
      ...(cancel
        ? {
            cancel: {
              message: {
                ...cancel.message,
                build: (input) =>
                  definitionOf(input.issued.codigoMunicipio ?? null).operations.cancel!.message.build(input),
                schemaFor: (signed) =>
                  schemaOf(layouts.versionOf(/<CodigoMunicipio>(\d+)<\/CodigoMunicipio>/.exec(signed)?.[1] ?? null)),
              },
              operation: dispatch((context) => byContext(context).cancel?.operation),
            },
          }
        : {}),
      ...(fallback.operations.queryCancellation
        ? { queryCancellation: dispatch((context) => byContext(context).queryCancellation) }
        : {}),
    },
  };
}
