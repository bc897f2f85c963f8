import { XMLSerializer } from '@xmldom/xmldom';
import { at, childElements, parseDom } from '../kit/xml-dom.ts';

/**
 * The generic ABRASF 1.00 sandbox's answers in the shapes of Belo Horizonte's ABRASF 1.00 schema edition (namespace
 * `http://www.abrasf.org.br/nfse.xsd`), used by the providers that ship it unchanged (Horus, CIGA): Nfse@versao and
 * NfseCancelamento@versao required, the cancellation answered as RetCancelamento{NfseCancelamento{Confirmacao{Pedido,
 * DataHoraCancelamento}, Signature}}. The sandbox's signature over Confirmacao stays valid (same namespace scope).
 */
export const BH_NS = 'http://www.abrasf.org.br/nfse.xsd';

export function bhAnswer(answer: string): string {
  const doc = parseDom(answer);
  const root = doc.documentElement!;
  for (const nfse of Array.from(root.getElementsByTagNameNS(BH_NS, 'Nfse'))) nfse.setAttribute('versao', '1.00');
  for (const held of Array.from(root.getElementsByTagNameNS(BH_NS, 'NfseCancelamento')))
    held.setAttribute('versao', '1.00');
  const cancelamento = root.localName === 'CancelarNfseResposta' ? at(root, 'Cancelamento') : null;
  if (cancelamento) {
    const ret = doc.createElementNS(BH_NS, 'RetCancelamento');
    const held = doc.createElementNS(BH_NS, 'NfseCancelamento');
    held.setAttribute('versao', '1.00');
    for (const node of childElements(cancelamento)) held.appendChild(node);
    ret.appendChild(held);
    root.replaceChild(ret, cancelamento);
  }
  return new XMLSerializer().serializeToString(root);
}
