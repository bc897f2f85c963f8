import type { SchemaName } from '../../xml/xsd.ts';
import { type FamilyDefinition, type SendContext, UnknownEndpointError } from '../kit/family.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { AbrasfProviderConfig } from './config.ts';
import { dispatch } from './layouts.ts';

/**
 * Providers whose ABRASF messages are in the city's own data namespace, per environment (config `cityDataNamespace`):
 * one definition per namespace (the configuration with that `dataNamespace` and the namespace's XSD), chosen by the
 * city and environment of each message, so every message is written, signed and validated in the city's namespace.
 * Generic: nothing here names a provider.
 */

const environmentName = (ambiente: 1 | 2) => (ambiente === 1 ? 'production' : 'homologation');

/** The city's data namespace for the environment (the registry's `soap` ProXMLNameSpace/HomXMLNameSpace), or null. */
export function cityDataNamespaceOf(municipality: string | null | undefined, ambiente: 1 | 2): string | null {
  if (!municipality) return null;
  const soap = municipalityRegistry().find(municipality)?.parameters?.soap;
  return soap?.[ambiente === 1 ? 'ProXMLNameSpace' : 'HomXMLNameSpace'] ?? null;
}

/** The city's data namespace for the environment when the configuration has its schema, else null. */
function servedNamespace(
  schemas: Readonly<Record<string, SchemaName>>,
  municipality: string | null | undefined,
  ambiente: 1 | 2,
): string | null {
  const namespace = cityDataNamespaceOf(municipality, ambiente);
  return namespace !== null && Object.hasOwn(schemas, namespace) ? namespace : null;
}

/** Whether the configuration has the schema of the city's data namespace in at least one environment. */
export function servesCityDataNamespace(config: AbrasfProviderConfig, municipality: string): boolean {
  const schemas = config.cityDataNamespace?.schemas ?? {};
  return servedNamespace(schemas, municipality, 1) !== null || servedNamespace(schemas, municipality, 2) !== null;
}

export function perCityDataNamespace(
  config: AbrasfProviderConfig,
  define: (config: AbrasfProviderConfig) => FamilyDefinition,
): FamilyDefinition {
  const schemas = config.cityDataNamespace!.schemas;
  const namespaces = Object.keys(schemas);
  if (namespaces.length === 0) throw new Error(`${config.provider}: cityDataNamespace without schemas`);
  const definitions = new Map<string, FamilyDefinition>();
  const definitionOf = (namespace: string) => {
    let definition = definitions.get(namespace);
    if (!definition) {
      const schema = schemas[namespace]!;
      definition = define({ ...config, cityDataNamespace: undefined, dataNamespace: namespace, schema });
      definitions.set(namespace, definition);
    }
    return definition;
  };
  const namespaceOf = (municipality: string | null | undefined, ambiente: 1 | 2) => {
    const namespace = servedNamespace(schemas, municipality, ambiente);
    if (!namespace) {
      throw new UnknownEndpointError(
        `${config.provider}: no ${environmentName(ambiente)} schema is known for the data namespace of ${municipality}`,
      );
    }
    return namespace;
  };
  /** a built message's definition: by the namespace it is written in (its first default namespace declaration) */
  const ofMessage = (xml: string) => {
    const namespace = /\sxmlns="([^"]+)"/.exec(xml)?.[1] ?? '';
    return definitionOf(Object.hasOwn(schemas, namespace) ? namespace : namespaces[0]!);
  };
  const byContext = (context: SendContext) =>
    definitionOf(namespaceOf(context.municipality, context.ambiente)).operations;
  const fallback = definitionOf(namespaces[0]!);
  const cancel = fallback.operations.cancel;
  return {
    ...fallback,
    layout: `ABRASF ${config.version} in the city's data namespace (${config.provider})`,
    serves: (municipality) => servesCityDataNamespace(config, municipality),
    check: (project, invoice) => [
      ...fallback.check(project, invoice),
      ...(servedNamespace(schemas, project.codigoMunicipio, project.ambiente)
        ? []
        : [
            {
              field: 'project.ambiente',
              message: `${config.provider}: no ${environmentName(project.ambiente)} schema is known for the data namespace of municipality ${project.codigoMunicipio}`,
            },
          ]),
    ],
    declaration: {
      ...fallback.declaration,
      build: (input) =>
        definitionOf(namespaceOf(input.project.codigoMunicipio, input.project.ambiente)).declaration.build(input),
      schemaFor: (signed) => ofMessage(signed).declaration.schema,
      schemaView: (signed) => ofMessage(signed).declaration.schemaView?.(signed) ?? signed,
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
                  definitionOf(
                    namespaceOf(input.issued.codigoMunicipio, input.issued.ambiente),
                  ).operations.cancel!.message.build(input),
                schemaFor: (signed) => ofMessage(signed).operations.cancel?.message.schema ?? null,
                schemaView: (signed) => ofMessage(signed).operations.cancel?.message.schemaView?.(signed) ?? signed,
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
