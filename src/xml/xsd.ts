import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { XmlDocument, XsdValidator } from 'libxml2-wasm';
import { xmlRegisterFsInputProviders } from 'libxml2-wasm/lib/nodejs.mjs';

/** The official schemas shipped in `schemas/`, each compiled once per process on first use. */
export const SCHEMA_FILES = {
  DPS: 'national/1.01/DPS_v1.01.xsd',
  NFSe: 'national/1.01/NFSe_v1.01.xsd',
  pedRegEvento: 'national/1.01/pedRegEvento_v1.01.xsd',
  evento: 'national/1.01/evento_v1.01.xsd',
  abrasf204: 'abrasf/nfse_v204.xsd',
  abrasf204Giss: 'abrasf/giss/giss-envio-v2_04.xsd',
  abrasf202: 'abrasf/nfse_v202.xsd',
  abrasf201Fiorilli: 'abrasf/nfse_v201-fiorilli.xsd',
  abrasf204Issnet: 'abrasf/nfse_v204-issnet.xsd',
  abrasf203Dsf: 'abrasf/nfse_v203-dsf.xsd',
  abrasf203Elotech: 'abrasf/nfse_v203-elotech.xsd',
  abrasf203Tinus: 'abrasf/nfse_v203-tinus.xsd',
  abrasf200MegaSoft: 'abrasf/nfse_v01-megasoft.xsd',
  abrasf202Futurize: 'abrasf/nfse_v202-futurize.xsd',
  abrasf202Centi: 'abrasf/nfse_v202-centi.xsd',
  abrasf201: 'abrasf/nfse_v201.xsd',
  abrasf203: 'abrasf/nfse_v203.xsd',
  abrasf200: 'abrasf/nfse_v200.xsd',
  abrasf204Ipm: 'abrasf/ipm/nfse_rt.xsd',
  abrasf203Desenvolve: 'abrasf/nfse_v203-desenvolve.xsd',
  abrasf204SigCorp: 'abrasf/nfse_v204-sigcorp.xsd',
  abrasf202FintelISS: 'abrasf/nfse_v202-finteliss.xsd',
  abrasf202ActconAlemParaibaProducao: 'abrasf/nfse_v202-actcon-3101508-producao.xsd',
  spEnvioRps: 'sao-paulo/v02/PedidoEnvioRPS_v02.xsd',
  spConsultaNfe: 'sao-paulo/v02/PedidoConsultaNFe_v02.xsd',
  spCancelamentoNfe: 'sao-paulo/v02/PedidoCancelamentoNFe_v02.xsd',
  abrasf100Salvador: 'abrasf-v1/nfse-salvador.xsd',
  abrasf100SpeedGov: 'abrasf-v1/speedgov/speedgov-envio-v1.xsd',
  abrasf100SpeedGovRpsResposta: 'abrasf-v1/speedgov/consultar_nfse_rps_resposta_v1.xsd',
  abrasf100MetropolisWeb: 'abrasf-v1/metropolisweb/nfse.xsd',
  abrasf100Publica: 'abrasf-v1/publica/nfse.xsd',
  abrasf100ISSIntel: 'abrasf-v1/issintel/nfse.xsd',
  abrasf100Horus: 'abrasf-v1/horus/nfse.xsd',
  abrasf100CIGA: 'abrasf-v1/ciga/nfse.xsd',
  abrasf100NFSeBrasil: 'abrasf-v1/nfsebrasil/rps.xsd',
  abrasf100WebISS: 'abrasf-v1/webiss/webiss-v1.xsd',
  abrasf100ISSNet: 'abrasf-v1/issnet/issnet-v1.xsd',
  ginfesV3: 'ginfes/ginfes-envio-v03.xsd',
  ginfesV3Resposta: 'ginfes/ginfes-resposta-v03.xsd',
  elLegacy: 'el/el-nfse-legacy.xsd',
  agili: 'agili/nfse_v_1.00.xsd',
} as const;

export type SchemaName = keyof typeof SCHEMA_FILES;

export type XsdResult = { ok: true } | { ok: false; errors: string[] };

const schemasDir = fileURLToPath(new URL('../../schemas/', import.meta.url));
const compiled = new Map<SchemaName, XsdValidator>();
let providersRegistered = false;

function validatorFor(name: SchemaName): XsdValidator {
  const existing = compiled.get(name);
  if (existing) return existing;
  if (!providersRegistered) {
    xmlRegisterFsInputProviders();
    providersRegistered = true;
  }
  const path = schemasDir + SCHEMA_FILES[name];
  if (!existsSync(path)) throw new Error(`schema file missing: ${path}`);
  const xsdDoc = XmlDocument.fromString(readFileSync(path, 'utf8'), { url: path });
  try {
    const validator = XsdValidator.fromDoc(xsdDoc);
    compiled.set(name, validator);
    return validator;
  } finally {
    xsdDoc.dispose();
  }
}

/**
 * Validates an XML document against one of the official schemas. Never throws for an invalid or
 * malformed document: the problems come back as values, one message per error with its line.
 */
export function validateXml(schema: SchemaName, xml: string): XsdResult {
  const validator = validatorFor(schema);
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(xml);
  } catch (err) {
    return { ok: false, errors: [`malformed XML: ${(err as Error).message}`] };
  }
  try {
    validator.validate(doc);
    return { ok: true };
  } catch (err) {
    const details = (err as { details?: { message: string; line?: number }[] }).details;
    if (details && details.length > 0) {
      return {
        ok: false,
        errors: details.map((d) => (d.line ? `line ${d.line}: ${d.message.trim()}` : d.message.trim())),
      };
    }
    return { ok: false, errors: [(err as Error).message] };
  } finally {
    doc.dispose();
  }
}
