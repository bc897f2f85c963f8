import type { SandboxSigner } from '../kit/xml-signature.ts';
import { signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import { child, parseDom, rootElementText } from '../kit/xml-dom.ts';
import { inscricaoRoot } from '../sefin/dps.ts';
import { checkEventRules, composeEvento, readPedido } from '../sefin/events.ts';
import type { Ambiente, IssuedEvent, SefinStore } from '../sefin/store.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { type Mensagem, NFSE_NS, SANDBOX_APP_VERSION, schemaErrors, signatureOf, usesExclusiveC14n } from './common.ts';

/**
 * A signed national `pedRegEvento` received by a municipal string-SOAP service: schema, signature (exclusive C14N when
 * the provider demands it), the author against the signer, the national event rules (E0840 for a note already
 * cancelled), then the `evento` the provider registers, signed by the sandbox.
 */
export function registerEvent(input: {
  xml: string;
  env: Ambiente;
  at: Date;
  store: SefinStore;
  signer: SandboxSigner;
  exclusiveC14n: boolean;
  /** the message used for any signature failure (SIL: "Falha na validação da assinatura") */
  signatureFailure: string;
}): { ok: true; event: IssuedEvent; chaveAcesso: string } | { ok: false; errors: Mensagem[] } {
  const { xml, env, at, store } = input;
  const problems = schemaErrors('pedRegEvento', xml);
  if (problems) return { ok: false, errors: [{ codigo: 'E1235', descricao: problems }] };
  const root = parseDom(xml).documentElement;
  if (root?.localName !== 'pedRegEvento' || root.namespaceURI !== NFSE_NS) {
    return { ok: false, errors: [{ codigo: 'E1242', descricao: 'Esperado pedRegEvento.' }] };
  }
  const pedido = readPedido(root);
  const signature = signatureOf(root);
  const verified = verifyEnvelopedSignature(xml, root, child(root, 'infPedReg')!);
  if (!signature || !verified.ok || (input.exclusiveC14n && !usesExclusiveC14n(signature))) {
    const detail = verified.ok ? 'C14N inclusiva não é aceita.' : verified.detail;
    return { ok: false, errors: [{ codigo: 'E1980', descricao: input.signatureFailure, correcao: detail }] };
  }
  const signerCnpj = verified.value.identity.cnpj;
  if (!pedido.cnpjAutor || !signerCnpj || inscricaoRoot(signerCnpj) !== inscricaoRoot(pedido.cnpjAutor)) {
    return { ok: false, errors: [{ codigo: 'E0812', descricao: 'CNPJAutor difere do certificado da assinatura.' }] };
  }
  const record = store.findByKey(env, pedido.chNFSe);
  const other = store.findByKey(env === 1 ? 2 : 1, pedido.chNFSe);
  const ruleError = checkEventRules(pedido, pedido.chNFSe, env, at, record, !!other);
  if (ruleError) {
    return {
      ok: false,
      errors: [{ codigo: ruleError.codigo, descricao: ruleError.descricao, correcao: ruleError.complemento }],
    };
  }
  const target = record!;
  const nSeqEvento = target.events.filter((e) => e.tipoEvento === pedido.tipoEvento).length + 1;
  const nDFSe = store.nextDfseNumber(env);
  const dhProc = brasiliaDateTime(at);
  const unsigned = composeEvento({
    chaveAcesso: target.chaveAcesso,
    tipoEvento: pedido.tipoEvento,
    nSeqEvento,
    dhProc,
    nDFSe,
    verAplic: SANDBOX_APP_VERSION,
    pedidoRaw: rootElementText(xml, 'pedRegEvento'),
  });
  const eventoXml = signEnveloped(unsigned, { rootName: 'evento', elementName: 'infEvento' }, input.signer);
  const invalid = schemaErrors('evento', eventoXml);
  if (invalid) throw new Error(`sandbox generated an evento that fails evento_v1.01.xsd: ${invalid}`);
  const event: IssuedEvent = { tipoEvento: pedido.tipoEvento, nSeqEvento, dhProc, nDFSe: String(nDFSe), eventoXml };
  store.addEvent(env, target.chaveAcesso, event);
  return { ok: true, event, chaveAcesso: target.chaveAcesso };
}
