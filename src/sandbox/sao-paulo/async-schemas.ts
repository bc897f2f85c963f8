import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';

/**
 * The official v02 schemas of São Paulo's asynchronous service (schemas-reformatributaria-v02-4, shipped in
 * `schemas/sao-paulo/v02/`): the lote (PedidoEnvioLoteRPSAsync_v02.xsd) and the situation query
 * (ConsultaSituacaoLoteAsync_v02.xsd), each compiled once on first use. The sandbox validates every async Pedido
 * against them (error 1001) — the engine validates its RPS against the synchronous schema before sending.
 */
const FILES = {
  lote: 'sao-paulo/v02/PedidoEnvioLoteRPSAsync_v02.xsd',
  situacao: 'sao-paulo/v02/ConsultaSituacaoLoteAsync_v02.xsd',
} as const;

const schemasDir = fileURLToPath(new URL('../../../schemas/', import.meta.url));
const compiled = new Map<keyof typeof FILES, XsdValidator>();
let registered = false;

function validatorFor(name: keyof typeof FILES): XsdValidator {
  const existing = compiled.get(name);
  if (existing) return existing;
  if (!registered) {
    xmlRegisterFsInputProviders();
    registered = true;
  }
  const path = schemasDir + FILES[name];
  if (!existsSync(path)) throw new Error(`schema file missing: ${path}`);
  // ConsultaSituacaoLoteAsync_v02.xsd imports the `tipos` namespace twice (TiposNFe, then TiposNFeAsync, which
  // includes TiposNFe); libxml2 skips a namespace's second import, so the first is dropped in memory (the file is
  // the official one, unchanged): TiposNFeAsync brings both.
  const text = readFileSync(path, 'utf8').replace(
    /<xsd:import namespace="http:\/\/www\.prefeitura\.sp\.gov\.br\/nfe\/tipos" schemaLocation="TiposNFe_v02\.xsd" \/>(?=\s*<xsd:import[^>]*TiposNFeAsync_v02\.xsd)/,
    '',
  );
  const xsd = XmlDocument.fromString(text, { url: path });
  try {
    const validator = XsdValidator.fromDoc(xsd);
    compiled.set(name, validator);
    return validator;
  } finally {
    xsd.dispose();
  }
}

/** The first schema problems of `xml` (joined), or null when it is valid. */
export function asyncSchemaErrors(name: keyof typeof FILES, xml: string): string | null {
  const validator = validatorFor(name);
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(xml);
  } catch (err) {
    return `malformed XML: ${(err as Error).message}`;
  }
  try {
    validator.validate(doc);
    return null;
  } catch (err) {
    const details = (err as { details?: { message: string; line?: number }[] }).details;
    return details && details.length > 0
      ? details
          .slice(0, 5)
          .map((d) => d.message.trim())
          .join(' | ')
      : (err as Error).message;
  } finally {
    doc.dispose();
  }
}
