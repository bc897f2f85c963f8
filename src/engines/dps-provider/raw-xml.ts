import { findDescendant, parseXml } from '../../xml/read.ts';
import type { Operation, SendContext } from '../kit/family.ts';
import { nationalFamily } from '../national/family.ts';
import { issuedFromNfseXml } from '../national/responses.ts';
import type { GovernmentError, IssuedDocument } from '../types.ts';

/**
 * Shared pieces of the providers that take the raw signed DPS in the HTTP body (ABase, Modernização Pública;
 * briefs/providers-own.md §4): their XML error bodies, the national NFS-e they embed in their answers, and the
 * operations their cities send to Sefin Nacional instead (ACBr `ServicosPadraoNacional`), which are the national
 * family's own operations sent to the URL of the operation's name (`FamilyDefinition.nationalOperations`).
 */

const NFSE_NAMESPACE = 'http://www.sped.fazenda.gov.br/nfse';

/** The context of a national operation: every URL the national operation asks for is the one of `name`. */
function nationalContext(context: SendContext, name: 'query' | 'queryCancellation'): SendContext {
  return {
    ...context,
    endpoints: { url: (_operation, ambiente, municipality) => context.endpoints.url(name, ambiente, municipality) },
  };
}

/** The national reconciliation (GET /dps/{id}, then GET /nfse/{chave}) at the URL of this provider's `query`. */
export const nationalQuery: Operation<{ id: string; xml: string }, IssuedDocument | null> = {
  exchange(document, context, send) {
    const query = nationalFamily.operations.query;
    if (!('exchange' in query)) throw new Error('the national query is an exchange');
    return query.exchange(document, nationalContext(context, 'query'), send);
  },
};

/** The national cancellation query (the e101101 event, sequence 1) at the URL of this provider's `queryCancellation`. */
export function nationalCancellationQuery(): NonNullable<(typeof nationalFamily)['operations']['queryCancellation']> {
  const operation = nationalFamily.operations.queryCancellation;
  if (!operation || !('request' in operation)) throw new Error('the national cancellation query is a request');
  return {
    request: (issued, context) => operation.request(issued, nationalContext(context, 'queryCancellation')),
    parse: (answer, issued, context) => operation.parse(answer, issued, nationalContext(context, 'queryCancellation')),
  };
}

/**
 * The errors of an XML answer: `Erros/Erro{Codigo, Descricao, Correcao}` (any depth), or a bare `<Erro>text</Erro>`
 * (code `ERRO`). Empty when the body holds neither (or is not XML).
 */
export function xmlErrors(body: string): GovernmentError[] {
  const parsed = parseXml(body);
  if (!parsed.ok) return [];
  const erros = findDescendant(parsed.root, 'Erros');
  const scope = erros ?? parsed.root;
  const items: Element[] = [];
  const collect = (el: Element) => {
    if (el.localName === 'Erro') items.push(el);
    else for (let n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 1) collect(n as Element);
  };
  collect(scope);
  return items.map((item) => {
    const field = (name: string) => findDescendant(item, name)?.textContent?.trim() || null;
    const structured = field('Codigo') !== null || field('Descricao') !== null;
    if (!structured) {
      return { Codigo: 'ERRO', Descricao: item.textContent?.trim() || 'Erro não detalhado pelo provedor' };
    }
    return {
      Codigo: field('Codigo') ?? 'ERRO',
      Descricao: field('Descricao') ?? 'Erro não detalhado pelo provedor',
      Complemento: field('Correcao'),
    };
  });
}

/**
 * The national NFS-e carried by an answer in a field named `NFSe`: either the signed `<NFSe xmlns=…nfse>` element
 * itself, or its text (escaped XML). Null when there is none or it has no key and number.
 */
export function embeddedNfse(body: string, ambiente: 1 | 2): IssuedDocument | null {
  const parsed = parseXml(body);
  if (!parsed.ok) return null;
  const field = findDescendant(parsed.root, 'NFSe');
  if (!field) return null;
  let xml: string | null = null;
  if (findDescendant(field, 'infNFSe')) {
    // the signed document as received, byte for byte (its signature covers these bytes)
    const start = body.indexOf(`<NFSe xmlns="${NFSE_NAMESPACE}"`);
    const end = body.lastIndexOf('</NFSe>');
    if (start >= 0 && end > start) xml = body.slice(start, end + '</NFSe>'.length);
    if (xml && /<\/NFSe>\s*<\/NFSe>$/.test(xml)) xml = xml.replace(/\s*<\/NFSe>$/, '');
  } else {
    const text = field.textContent?.trim() ?? '';
    if (text.startsWith('<')) xml = text;
  }
  return xml ? issuedFromNfseXml(xml, null, ambiente) : null;
}
