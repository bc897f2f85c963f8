import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { XMLSerializer } from '@xmldom/xmldom';
import { normalizeCnpj } from '../../domain/tax-ids.ts';
import { validateXml } from '../../xml/xsd.ts';
import { JsonlFile } from '../kit/jsonl.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, child, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';

/**
 * Agili ("AgiliBlue", `…/api/<Operacao>`) below `/municipal/agili/{producao|producaorestrita}`: plain HTTP POST of
 * the XML message, no SOAP, no client certificate, no signature; the taxpayer's `ChaveDigital` (32 characters) and
 * the city hall's CNPJ (`UnidadeGestora`) inside each message. Every request is validated against the provider's
 * schema `nfse_v_1.00.xsd` (OpenAC-Net/OpenAC.Net.NFSe, `schemas/agili/`); operations and answer shapes from that
 * schema and ACBr `Agili.Provider.pas`:
 *
 *   POST /GerarNfse          GerarNfseEnvio          → GerarNfseResposta {UnidadeGestora, Nfse | ListaMensagemRetorno}
 *   POST /ConsultarNfseRps   ConsultarNfseRpsEnvio   → ConsultarNfseRpsResposta {UnidadeGestora, Nfse | …}
 *   POST /ConsultarNfseFaixa ConsultarNfseFaixaEnvio → ConsultarNfseFaixaResposta {UnidadeGestora, ListaNfse | …}
 *   POST /CancelarNfse       CancelarNfseEnvio       → CancelarNfseResposta {UnidadeGestora, PedidoCancelamento,
 *                                                       DataHora, ProtocoloRequerimentoCancelamento | …}
 *
 * Refusals are `ListaMensagemRetorno/MensagemRetorno{Codigo, Mensagem, Correcao, Versao}` (HTTP 200). The provider's
 * codes are not published: these are the sandbox's (≤ 4 characters, as `tsCodigoMensagemAlerta` allows):
 * A001 schema, A002 unknown city hall (`UnidadeGestora`), A003 invalid key for the CNPJ, A004 RPS already issued,
 * A005 Simples Nacional option contrary to the taxpayer's registration, A006 ISS amount inconsistent with base and
 * rate, A007 note not found, A008 note already cancelled, A009 rate outside 2–5 % outside the Simples Nacional.
 * Settings (operator): `PUT /__sandbox/agili/settings {"unidadesGestoras": {"<cnpj>": "<IBGE>"}, "keys": {"<chave>":
 * {"cnpj": "…", "simplesNacional": false}}}`; until set, any valid city-hall CNPJ and any 32-character key are
 * accepted. Notes are kept in `<dataDir>/agili/notes.jsonl`.
 */

const NS = 'http://www.agili.com.br/nfse_v_1.00.xsd';
const OPERATIONS: Record<string, string> = {
  GerarNfse: 'GerarNfseEnvio',
  ConsultarNfseRps: 'ConsultarNfseRpsEnvio',
  ConsultarNfseFaixa: 'ConsultarNfseFaixaEnvio',
  CancelarNfse: 'CancelarNfseEnvio',
};

interface Note {
  env: string;
  unidade: string;
  cnpj: string;
  rps: string;
  numero: string;
  codigo: string;
  emitidaEm: string;
  declaracao: string;
  municipio: string;
  cancelada: { em: string; codigo: string; justificativa: string } | null;
}

interface Settings {
  unidadesGestoras: Record<string, string> | null;
  keys: Record<string, { cnpj?: string; simplesNacional?: boolean }> | null;
}

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly correction?: string,
  ) {
    super(message);
  }
}

const xml = (body: string): SandboxReply => ({
  status: 200,
  headers: { 'content-type': 'application/xml; charset=utf-8' },
  body: `<?xml version="1.0" encoding="UTF-8"?>${body}`,
});

function answer(root: string, unidade: string, content: string): SandboxReply {
  return xml(`<${root} xmlns="${NS}"><UnidadeGestora>${escapeXml(unidade)}</UnidadeGestora>${content}</${root}>`);
}

function messages(root: string, unidade: string, refusal: Refusal): SandboxReply {
  const correcao = refusal.correction ? `<Correcao>${escapeXml(refusal.correction.slice(0, 300))}</Correcao>` : '';
  return answer(
    root,
    unidade || '00000000000000',
    `<ListaMensagemRetorno><MensagemRetorno><Codigo>${refusal.code}</Codigo>` +
      `<Mensagem>${escapeXml(refusal.message.slice(0, 300))}</Mensagem>${correcao}<Versao>1.00</Versao>` +
      '</MensagemRetorno></ListaMensagemRetorno>',
  );
}

/** The declaration as received (the schema's tcNfse holds it whole, its IdentificacaoPrestador with the key). */
function declaracaoOf(el: Element): string {
  return new XMLSerializer().serializeToString(el).replace(/ xmlns="[^"]*"/, '');
}

const brasilia = (date: Date) => `${new Date(date.getTime() - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`;

export function createAgiliService(deps: MunicipalSandboxDependencies): SandboxService {
  const notes: Note[] = [];
  const numbers = new Map<string, number>();
  const settings: Settings = { unidadesGestoras: null, keys: null };
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'agili', 'notes.jsonl')) : null;
  store?.replay(
    (note) => {
      const index = notes.findIndex(
        (n) => n.env === note.env && n.unidade === note.unidade && n.numero === note.numero,
      );
      if (index >= 0) notes[index] = note;
      else notes.push(note);
      const key = `${note.env}/${note.unidade}`;
      numbers.set(key, Math.max(numbers.get(key) ?? 0, Number(note.numero)));
    },
    (m) => deps.logger.warn(m),
  );
  const save = (note: Note) => store?.append(note);

  function unidadeOf(root: Element): string {
    const value = textAt(root, 'UnidadeGestora') ?? '';
    if (!normalizeCnpj(value))
      throw new Refusal('A002', 'UnidadeGestora não é um CNPJ válido', 'Informe o CNPJ da prefeitura');
    if (settings.unidadesGestoras && !settings.unidadesGestoras[value]) {
      throw new Refusal('A002', 'Unidade gestora não atendida por este serviço', 'Informe o CNPJ da prefeitura');
    }
    return value;
  }

  /** The prestador of a message: its key must belong to its CNPJ. */
  function prestadorOf(el: Element | null): { cnpj: string; simplesNacional: boolean | undefined } {
    const chave = textAt(el, 'ChaveDigital') ?? '';
    const cnpj = textAt(el, 'CpfCnpj/Cnpj') ?? textAt(el, 'CpfCnpj/Cpf') ?? '';
    if (!chave) throw new Refusal('A003', 'ChaveDigital não informada');
    if (settings.keys) {
      const known = settings.keys[chave];
      if (!known || (known.cnpj && known.cnpj !== cnpj)) {
        throw new Refusal('A003', 'Chave digital inválida para o CPF/CNPJ do prestador');
      }
      return { cnpj, simplesNacional: known.simplesNacional };
    }
    return { cnpj, simplesNacional: undefined };
  }

  function nfseXml(note: Note): string {
    const situacao = note.cancelada
      ? `<SituacaoNfse><Codigo>-2</Codigo><Descricao>Cancelada</Descricao><DataCancelamento>${note.cancelada.em}</DataCancelamento>` +
        `<CodigoCancelamento>${note.cancelada.codigo}</CodigoCancelamento>` +
        `<JustificativaCancelamento>${escapeXml(note.cancelada.justificativa)}</JustificativaCancelamento></SituacaoNfse>`
      : '<SituacaoNfse><Codigo>-8</Codigo><Descricao>Normal</Descricao></SituacaoNfse>';
    return (
      `<Nfse><Numero>${note.numero}</Numero><CodigoAutenticidade>${note.codigo}</CodigoAutenticidade>` +
      `<DataEmissao>${note.emitidaEm}</DataEmissao>${situacao}` +
      `<IdentificacaoOrgaoGerador><Municipio><CodigoMunicipioIBGE>${note.municipio}</CodigoMunicipioIBGE></Municipio></IdentificacaoOrgaoGerador>` +
      `<DadosPrestador><RazaoSocial>PRESTADOR ${note.cnpj}</RazaoSocial><Endereco><TipoLogradouro>RUA</TipoLogradouro>` +
      `<Logradouro>CADASTRO MUNICIPAL</Logradouro><Municipio><CodigoMunicipioIBGE>${note.municipio}</CodigoMunicipioIBGE></Municipio>` +
      `<Pais><CodigoPaisBacen>1058</CodigoPaisBacen></Pais><Cep>78000000</Cep></Endereco></DadosPrestador>` +
      `${note.declaracao}</Nfse>`
    );
  }

  function gerar(env: string, root: Element, unidade: string): SandboxReply {
    const decl = child(root, 'DeclaracaoPrestacaoServico');
    if (!decl) throw new Refusal('A001', 'DeclaracaoPrestacaoServico ausente');
    const prestador = prestadorOf(child(decl, 'IdentificacaoPrestador'));
    const simples = textAt(decl, 'OptanteSimplesNacional') === '1';
    if (prestador.simplesNacional !== undefined && prestador.simplesNacional !== simples) {
      throw new Refusal('A005', 'Opção pelo Simples Nacional diverge do cadastro do contribuinte');
    }
    const rps = `${textAt(decl, 'Rps/IdentificacaoRps/Numero')}/${textAt(decl, 'Rps/IdentificacaoRps/Serie') ?? ''}`;
    if (notes.some((n) => n.env === env && n.unidade === unidade && n.cnpj === prestador.cnpj && n.rps === rps)) {
      throw new Refusal('A004', `RPS ${rps} já convertido em NFS-e`);
    }
    const base = Number(textAt(decl, 'ValorBaseCalculoISSQN') ?? textAt(decl, 'ValorServicos') ?? 0);
    const aliquota = Number(textAt(decl, 'AliquotaISSQN') ?? 0);
    const calculado = Number(textAt(decl, 'ValorISSQNCalculado') ?? 0);
    if (Math.abs((base * aliquota) / 100 - calculado) > 0.01) {
      throw new Refusal('A006', 'ValorISSQNCalculado diverge de base de cálculo × alíquota');
    }
    if (!simples && textAt(decl, 'ExigibilidadeISSQN/Codigo') === '-1' && (aliquota < 2 || aliquota > 5)) {
      throw new Refusal('A009', 'Alíquota do ISSQN fora do intervalo de 2% a 5% (LC 116/2003, arts. 8 e 8-A)');
    }
    const key = `${env}/${unidade}`;
    const numero = String((numbers.get(key) ?? 0) + 1);
    numbers.set(key, Number(numero));
    const now = deps.now();
    const note: Note = {
      env,
      unidade,
      cnpj: prestador.cnpj,
      rps,
      numero,
      codigo: createHash('md5').update(`${unidade}/${numero}/${now.toISOString()}`).digest('hex').toUpperCase(),
      emitidaEm: brasilia(now),
      declaracao: declaracaoOf(decl),
      municipio:
        settings.unidadesGestoras?.[unidade] ?? textAt(decl, 'MunicipioIncidencia/CodigoMunicipioIBGE') ?? '0000000',
      cancelada: null,
    };
    notes.push(note);
    save(note);
    return answer('GerarNfseResposta', unidade, nfseXml(note));
  }

  function consultarRps(env: string, root: Element, unidade: string): SandboxReply {
    const prestador = prestadorOf(child(root, 'IdentificacaoPrestador'));
    const rps = `${textAt(root, 'IdentificacaoRps/Numero')}/${textAt(root, 'IdentificacaoRps/Serie') ?? ''}`;
    const note = notes.find(
      (n) => n.env === env && n.unidade === unidade && n.cnpj === prestador.cnpj && n.rps === rps,
    );
    if (!note) throw new Refusal('A007', `Nenhuma NFS-e para o RPS ${rps}`);
    return answer('ConsultarNfseRpsResposta', unidade, nfseXml(note));
  }

  function consultarFaixa(env: string, root: Element, unidade: string): SandboxReply {
    const prestador = prestadorOf(child(root, 'IdentificacaoPrestador'));
    const from = Number(textAt(root, 'NumeroNfseInicial'));
    const to = Number(textAt(root, 'NumeroNfseFinal') ?? from);
    const found = notes.filter(
      (n) =>
        n.env === env && n.unidade === unidade && n.cnpj === prestador.cnpj && +n.numero >= from && +n.numero <= to,
    );
    if (found.length === 0) throw new Refusal('A007', 'Nenhuma NFS-e na faixa informada');
    return answer('ConsultarNfseFaixaResposta', unidade, `<ListaNfse>${found.map(nfseXml).join('')}</ListaNfse>`);
  }

  function cancelar(env: string, root: Element, unidade: string): SandboxReply {
    const pedido = child(root, 'PedidoCancelamento');
    const prestador = prestadorOf(at(pedido, 'IdentificacaoNfse/IdentificacaoPrestador'));
    const numero = textAt(pedido, 'IdentificacaoNfse/Numero') ?? '';
    const note = notes.find(
      (n) => n.env === env && n.unidade === unidade && n.cnpj === prestador.cnpj && n.numero === numero,
    );
    if (!note) throw new Refusal('A007', `NFS-e ${numero} não encontrada`);
    if (note.cancelada) throw new Refusal('A008', `NFS-e ${numero} já cancelada`);
    note.cancelada = {
      em: brasilia(deps.now()),
      codigo: textAt(pedido, 'CodigoCancelamento') ?? '1',
      justificativa: textAt(pedido, 'JustificativaCancelamento') ?? '',
    };
    save(note);
    const echo = new XMLSerializer().serializeToString(pedido as Element);
    return answer(
      'CancelarNfseResposta',
      unidade,
      `${echo.replace(/ xmlns="[^"]*"/, '')}<DataHora>${note.cancelada.em}</DataHora>` +
        `<ProtocoloRequerimentoCancelamento>${note.codigo.slice(0, 20)}</ProtocoloRequerimentoCancelamento>`,
    );
  }

  function handle(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente ?? 'producaorestrita';
    const operation = req.subPath.replace(/^\/+|\/+$/g, '');
    const expected = OPERATIONS[operation];
    if (!expected) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' };
    const answerRoot = expected.replace(/Envio$/, 'Resposta');
    const body = req.body.toString('utf8');
    let unidade = '';
    try {
      let root: Element | null;
      try {
        root = parseDom(body).documentElement;
      } catch (err) {
        throw new Refusal('A001', `XML malformado: ${(err as Error).message}`);
      }
      if (!root || root.localName !== expected || root.namespaceURI !== NS) {
        throw new Refusal('A001', `Mensagem esperada: ${expected} (${NS})`);
      }
      unidade = textAt(root, 'UnidadeGestora') ?? '';
      const schema = validateXml('agili', body);
      if (!schema.ok) {
        throw new Refusal(
          'A001',
          'Mensagem em desacordo com o schema nfse_v_1.00.xsd',
          schema.errors.slice(0, 3).join(' | '),
        );
      }
      unidade = unidadeOf(root);
      if (operation === 'GerarNfse') return gerar(env, root, unidade);
      if (operation === 'ConsultarNfseRps') return consultarRps(env, root, unidade);
      if (operation === 'ConsultarNfseFaixa') return consultarFaixa(env, root, unidade);
      return cancelar(env, root, unidade);
    } catch (err) {
      if (err instanceof Refusal) return messages(answerRoot, normalizeCnpj(unidade) ? unidade : '', err);
      throw err;
    }
  }

  return {
    family: 'agili',
    name: 'Agili',
    mount: '/municipal/agili/:ambiente(producao|producaorestrita)',
    routes: Object.keys(OPERATIONS).map((op) => ({
      method: 'POST',
      path: `/${op}`,
      name: `agili-${op}`,
      handler: handle,
    })),
    notFound: () => ({ status: 404, headers: { 'content-type': 'text/plain' }, body: 'Not Found' }),
    errorReply: (_req, err) => ({ status: 500, headers: { 'content-type': 'text/plain' }, body: err.message }),
    faults: {
      errorReply: () => ({ status: 503, headers: { 'content-type': 'text/plain' }, body: 'Service Unavailable' }),
    },
    admin: [
      {
        method: 'PUT',
        path: '/__sandbox/agili/settings',
        handler(req) {
          const given = req.json() ?? {};
          settings.unidadesGestoras =
            given.unidadesGestoras && typeof given.unidadesGestoras === 'object'
              ? (given.unidadesGestoras as Record<string, string>)
              : null;
          settings.keys = given.keys && typeof given.keys === 'object' ? (given.keys as Settings['keys']) : null;
          return {
            status: 200,
            body: {
              unidadesGestoras: settings.unidadesGestoras ? Object.keys(settings.unidadesGestoras).length : null,
              keys: settings.keys ? Object.keys(settings.keys).length : null,
            },
          };
        },
      },
    ],
  };
}

export const agiliSandbox: MunicipalSandbox = { engine: 'own-layout:agili', slug: 'agili', create: createAgiliService };
