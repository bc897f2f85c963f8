import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { XMLSerializer } from '@xmldom/xmldom';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import {
  readSoapRequest,
  SoapClientError,
  schemaErrors,
  soapFault,
  stringParameter,
  soapServiceReplies,
} from '../soap-string/common.ts';

/**
 * NFSeBrasil (Memory Informática, `lote_rps_service.php`) below `/municipal/nfsebrasil/{producao|producaorestrita}`:
 * an RPC/encoded SOAP 1.1 service in `urn:loterpswsdl` (the style of a PHP NuSOAP server), no client certificate,
 * nothing signed, the taxpayer's access key (`hashValidador`) in every call. Facts from ACBr NFSeBrasil.Provider.pas
 * and the provider's rps.xsd (schemas/abrasf-v1/nfsebrasil/, ACBr copy):
 *
 *   tm_lote_rps_service.importarLoteRPS  {xml, codMunicipio, cnpjPrestador, hashValidador}
 *   tm_lote_rps_service.consultarLoteRPS {protocolo, …}     tm_lote_rps_service.consultarRPS {numeroRPS, …}
 *   → `<return xsi:type="xsd:string">` holding RespostaLoteRps {status, protocolo, erros/erro, avisos/aviso,
 *     notas/nota/xml/CompNfse}; refusals are texts without codes.
 *
 * Readings for what no public source shows (the engine, src/engines/abrasf-v1/providers/nfsebrasil.ts, relies on no
 * more): the unqualified message is validated with the schema's namespace made its default; `&amp;` is decoded once
 * more before the message is read, so names with `&` must travel as `&amp;amp;` (ACBr "Tratamento de nomes com &")
 * and a singly escaped `&` leaves the message malformed; every check is made at reception (refusal: erros, no
 * protocolo); an accepted lote is processed `holdMs` later (consultarLoteRPS: no
 * `notas` until then); consultarRPS with no note answers neither notas nor erros, and an RPS still in an unprocessed
 * lote is an `erro`; the note is an ABRASF 1.00 CompNfse, unqualified like the rest of the wire (no answer schema is
 * public); `status` texts are the sandbox's own. consultarNFSE and cancelarNFSE answer a SOAP fault: their answers
 * are not documented publicly. Keys: any non-empty key until `PUT /__sandbox/nfsebrasil/settings
 * {"keys": {"<hash>": {"cnpj": "…", "inscricaoMunicipal": "…"}}}` binds keys to taxpayers. Stores:
 * `<dataDir>/nfsebrasil/lotes.jsonl`.
 */
const SOAP_NS = 'urn:loterpswsdl';
const DATA_NS = 'http://www.nfsebrasil.net.br/nfse/rps/xsd/rps.xsd';
const OPERATIONS: Record<string, string> = {
  'tm_lote_rps_service.importarLoteRPS': 'xml',
  'tm_lote_rps_service.consultarLoteRPS': 'protocolo',
  'tm_lote_rps_service.consultarRPS': 'numeroRPS',
  'tm_lote_rps_service.consultarNFSE': 'numeroNFSE',
  'tm_lote_rps_service.cancelarNFSE': 'numeroNFSE',
};

interface Note {
  numero: string;
  rps: string;
  serie: string;
  codigo: string;
  /** the CompNfse, unqualified */
  xml: string;
}

interface Lote {
  env: string;
  protocolo: string;
  cnpj: string;
  readyAt: number;
  /** the accepted RPS (InfRps outer XML) until processed, then the notes */
  rps: { numero: string; serie: string; infRps: string }[];
  notes: Note[];
}

class Refusal extends Error {}

const serializer = new XMLSerializer();
const resposta = (inner: string) => `<RespostaLoteRps>${inner}</RespostaLoteRps>`;
const erros = (messages: string[]) => messages.map((m) => `<erros><erro>${escapeXml(m)}</erro></erros>`).join('');

function answer(operation: string, content: string): SandboxReply {
  return {
    status: 200,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body:
      '<?xml version="1.0" encoding="UTF-8"?><SOAP-ENV:Envelope SOAP-ENV:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" ' +
      'xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" ' +
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:SOAP-ENC="http://schemas.xmlsoap.org/soap/encoding/">' +
      `<SOAP-ENV:Body><ns1:${operation}Response xmlns:ns1="${SOAP_NS}"><return xsi:type="xsd:string">` +
      `${escapeXml(content)}</return></ns1:${operation}Response></SOAP-ENV:Body></SOAP-ENV:Envelope>`,
  };
}

const brasilia = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19);

export function createNFSeBrasilService(deps: MunicipalSandboxDependencies & { holdMs?: number }): SandboxService {
  const holdMs = deps.holdMs ?? 2_000;
  const lotes: Lote[] = [];
  let keys: Record<string, { cnpj?: string; inscricaoMunicipal?: string }> | null = null;
  const store = deps.dataDir ? new JsonlFile<Lote>(join(deps.dataDir, 'nfsebrasil', 'lotes.jsonl')) : null;
  store?.replay(
    (lote) => {
      const index = lotes.findIndex((l) => l.env === lote.env && l.protocolo === lote.protocolo);
      if (index >= 0) lotes[index] = lote;
      else lotes.push(lote);
    },
    (m) => deps.logger.warn(m),
  );
  const noteCount = (env: string) => lotes.filter((l) => l.env === env).reduce((n, l) => n + l.notes.length, 0);

  /** Issues the notes of a lote whose time has come. */
  function process(lote: Lote): void {
    if (lote.rps.length === 0 || deps.now().getTime() < lote.readyAt) return;
    for (const rps of lote.rps) {
      const inf = parseDom(rps.infRps).documentElement;
      const numero = String(noteCount(lote.env) + 1);
      const codigo = createHash('sha256').update(`${lote.env}|${lote.cnpj}|${numero}`).digest('hex').slice(0, 9);
      const part = (path: string) => {
        const el = at(inf, path);
        return el ? serializer.serializeToString(el) : '';
      };
      const xml =
        `<CompNfse><Nfse><InfNfse Id="${numero}"><Numero>${numero}</Numero><CodigoVerificacao>${codigo.toUpperCase()}` +
        `</CodigoVerificacao><DataEmissao>${brasilia(deps.now())}</DataEmissao>${part('IdentificacaoRps')}` +
        `<DataEmissaoRps>${escapeXml(textAt(inf, 'DataEmissao') ?? '')}</DataEmissaoRps>${part('NaturezaOperacao')}` +
        `${part('Servico')}<PrestadorServico><IdentificacaoPrestador>${part('Prestador/Cnpj')}` +
        `${part('Prestador/InscricaoMunicipal')}</IdentificacaoPrestador></PrestadorServico>` +
        `${part('Tomador').replace(/^<Tomador>|<\/Tomador>$/g, (t) => t.replace('Tomador', 'TomadorServico'))}` +
        `<OrgaoGerador><CodigoMunicipio>${escapeXml(textAt(inf, 'Servico/CodigoMunicipio') ?? '')}</CodigoMunicipio>` +
        '</OrgaoGerador></InfNfse></Nfse></CompNfse>';
      lote.notes.push({ numero, rps: rps.numero, serie: rps.serie, codigo, xml });
      deps.logger.info(`sandbox NFSeBrasil: NFS-e ${numero} issued for RPS ${rps.numero} (lote ${lote.protocolo})`);
    }
    lote.rps = [];
    store?.append(lote);
  }

  const notas = (notes: Note[]) =>
    notes.length ? `<notas>${notes.map((n) => `<nota><xml>${n.xml}</xml></nota>`).join('')}</notas>` : '';

  function importar(env: string, message: string, cod: string, cnpj: string, key: string): string {
    // the provider decodes `&amp;` once more than XML does: a bare `&` left by a single escape breaks the message
    const xml = message.replace(/&amp;/g, '&').replace(/^\s*<\?xml[^>]*\?>/, '');
    const view = xml.replace(/^<EnviarLoteRpsEnvio/, `<EnviarLoteRpsEnvio xmlns="${DATA_NS}"`);
    const invalid = schemaErrors('abrasf100NFSeBrasil', view);
    if (invalid) throw new Refusal(`Arquivo fora do schema rps.xsd: ${invalid}`);
    const root = parseDom(xml).documentElement;
    const lote = at(root, 'LoteRps')!;
    if (lote.getAttribute('codMunicipio') !== cod) throw new Refusal('codMunicipio do lote difere do informado');
    if (textAt(lote, 'Cnpj') !== cnpj) throw new Refusal('CNPJ do lote difere do cnpjPrestador');
    const registered = keys?.[key];
    if (registered?.inscricaoMunicipal && textAt(lote, 'InscricaoMunicipal') !== registered.inscricaoMunicipal) {
      throw new Refusal('Inscrição municipal não confere com a do prestador do hash validador');
    }
    const list = childElements(at(lote, 'ListaRps')!);
    if (Number(textAt(lote, 'QuantidadeRps')) !== list.length) throw new Refusal('QuantidadeRps difere da ListaRps');
    const accepted: Lote['rps'] = [];
    for (const rps of list) {
      const inf = at(rps, 'InfRps')!;
      const numero = textAt(inf, 'IdentificacaoRps/Numero') ?? '';
      const serie = textAt(inf, 'IdentificacaoRps/Serie') ?? '';
      if (textAt(inf, 'Prestador/Cnpj') !== cnpj) throw new Refusal(`RPS ${numero}: prestador difere do cnpjPrestador`);
      if (Date.parse(`${textAt(inf, 'DataEmissao')}-03:00`) > deps.now().getTime()) {
        throw new Refusal(`RPS ${numero}: data de emissão posterior à data atual`);
      }
      if (Number(textAt(inf, 'Servico/Valores/Aliquota')) > 5) throw new Refusal(`RPS ${numero}: alíquota acima de 5%`);
      const held = lotes.some(
        (l) =>
          l.env === env &&
          l.cnpj === cnpj &&
          (l.rps.some((r) => r.numero === numero && r.serie === serie) ||
            l.notes.some((n) => n.rps === numero && n.serie === serie)),
      );
      if (held) throw new Refusal(`RPS ${numero} série ${serie} já informado`);
      accepted.push({ numero, serie, infRps: serializer.serializeToString(inf) });
    }
    const protocolo = String(lotes.filter((l) => l.env === env).length + 1).padStart(10, '0');
    const entry: Lote = { env, protocolo, cnpj, readyAt: deps.now().getTime() + holdMs, rps: accepted, notes: [] };
    lotes.push(entry);
    store?.append(entry);
    return resposta(`<status>Lote recebido</status><protocolo>${protocolo}</protocolo>`);
  }

  function handle(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente ?? 'producaorestrita';
    let operation = '';
    try {
      const soap = readSoapRequest(req.body);
      operation = soap.operation;
      const first = OPERATIONS[operation];
      if (!first || soap.namespace !== SOAP_NS) {
        throw new SoapClientError(`Operação desconhecida: ${operation} (${soap.namespace ?? 'sem namespace'})`);
      }
      const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
      if (action !== `${SOAP_NS}#${operation}`) throw new SoapClientError(`SOAPAction inválida: ${action}`);
      const names = childElements(soap.element).map((e) => e.localName);
      if (names.join() !== [first, 'codMunicipio', 'cnpjPrestador', 'hashValidador'].join()) {
        throw new SoapClientError(`Parâmetros esperados: ${first}, codMunicipio, cnpjPrestador, hashValidador`);
      }
      const param = (name: string) => stringParameter(soap.element, name, null);
      const [value, cod, cnpj, key] = [
        param(first),
        param('codMunicipio'),
        param('cnpjPrestador'),
        param('hashValidador'),
      ];
      if (!operation.endsWith('RPS'))
        throw new SoapClientError(`${operation}: não disponível no sandbox (resposta não documentada)`);
      try {
        if (!key || key !== key.toLowerCase() || (keys && keys[key]?.cnpj !== cnpj)) {
          throw new Refusal('Hash validador inválido para o prestador informado');
        }
        if (!/^\d{7}$/.test(cod) || !/^\d{14}$/.test(cnpj)) throw new Refusal('codMunicipio ou cnpjPrestador inválido');
        const mine = lotes.filter((l) => l.env === env && l.cnpj === cnpj);
        if (operation.endsWith('importarLoteRPS')) return answer(operation, importar(env, value, cod, cnpj, key));
        if (operation.endsWith('consultarLoteRPS')) {
          const lote = mine.find((l) => l.protocolo === value);
          if (!lote) throw new Refusal(`Protocolo ${value} não encontrado`);
          process(lote);
          const done = lote.rps.length === 0;
          return answer(
            operation,
            resposta(
              `<status>${done ? 'Lote processado' : 'Lote em processamento'}</status><protocolo>${lote.protocolo}</protocolo>${notas(lote.notes)}`,
            ),
          );
        }
        for (const lote of mine) process(lote);
        if (mine.some((l) => l.rps.some((r) => r.numero === value)))
          throw new Refusal(`RPS ${value} ainda em processamento`);
        const found = mine.flatMap((l) => l.notes.filter((n) => n.rps === value));
        return answer(
          operation,
          resposta(`<status>${found.length ? 'RPS processado' : 'RPS não encontrado'}</status>${notas(found)}`),
        );
      } catch (err) {
        if (err instanceof Refusal) return answer(operation, resposta(`<status>Erro</status>${erros([err.message])}`));
        throw err;
      }
    } catch (err) {
      if (err instanceof SoapClientError) return soapFault(500, 'soap:Client', err.message);
      throw err;
    }
  }

  return {
    family: 'abrasf-v1-nfsebrasil',
    name: 'NFSeBrasil',
    mount: '/municipal/nfsebrasil/:ambiente(producao|producaorestrita)',
    routes: [{ method: 'POST', path: '/', name: 'nfsebrasil', handler: handle }],
    ...soapServiceReplies(),
    admin: [
      registerSettingsRoute<NonNullable<typeof keys>>({
        slug: 'nfsebrasil',
        field: 'keys',
        set: (given) => {
          keys = given;
        },
      }),
    ],
  };
}

export const nfseBrasilSandbox: MunicipalSandbox = {
  engine: 'abrasf-v1:nfsebrasil',
  slug: 'nfsebrasil',
  create: createNFSeBrasilService,
};
