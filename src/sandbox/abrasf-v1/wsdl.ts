import { at, parseDom } from '../kit/xml-dom.ts';
import type { AbrasfV1SandboxProfile, V1Operation } from './service.ts';

/** The official ABRASF 1.00 WSDL's operation elements (nfse.wsdl) and the operation each one is. */
const WSDL_OPERATIONS: Record<V1Operation, string> = {
  recepcionar: 'RecepcionarLoteRps',
  consultarSituacao: 'ConsultarSituacaoLoteRps',
  consultarLote: 'ConsultarLoteRps',
  consultarPorRps: 'ConsultarNfsePorRps',
  consultarNfse: 'ConsultarNfse',
  cancelar: 'CancelarNfse',
};

/**
 * The operations table of a provider that keeps the WSDL's element names (but those `renamed`: Publica's
 * ConsultarNfseFaixa), each travelling as `travel(element)` says (its SOAPAction and string parameter).
 */
export function wsdlOperationTable(
  travel: (element: string) => { soapAction: string; parameter: string },
  renamed: Partial<Record<V1Operation, string>> = {},
): AbrasfV1SandboxProfile['operations'] {
  const entries = Object.entries(WSDL_OPERATIONS) as [V1Operation, string][];
  return Object.fromEntries(
    entries.map(([operation, official]) => {
      const element = renamed[operation] ?? official;
      return [element, { operation, ...travel(element) }];
    }),
  );
}

/**
 * The check of a provider's cabeçalho string: `<cabecalho versao="…"><versaoDados>…</versaoDados>` with the given
 * version, in one of `namespaces` (null: none) or in any namespace when not given.
 */
export function cabecalhoCheck(options: { versao: string; namespaces?: readonly (string | null)[] }) {
  return (xml: string): boolean => {
    try {
      const root = parseDom(xml).documentElement;
      return (
        root?.localName === 'cabecalho' &&
        (!options.namespaces || options.namespaces.includes(root.namespaceURI || null)) &&
        root.getAttribute('versao') === options.versao &&
        at(root, 'versaoDados')?.textContent === options.versao
      );
    } catch {
      return false;
    }
  };
}
