import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIpmService } from '../../src/sandbox/ipm/service.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';

/**
 * The IPM sandbox on the wire, with hand-written messages in the manual's shape (ipm/samples/exemplo_emissao.xml):
 * Basic auth checked (401 00131/00132), exactly one XML file part in multipart/form-data, ISO-8859-1 declared,
 * decimal comma, the prestador bound to the Basic user (00133), `<identificador>` idempotent, consulta_rps, the
 * cancellation (00226 when already cancelled) and the kit's fault injection.
 */
const CNPJ = '11222333000181';
const SENHA = 'senha-atende';
let server: SandboxServer;
let base: string;

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function emission(identificador: string, overrides: { total?: string; cnpj?: string } = {}): string {
  return (
    '<?xml version="1.0" encoding="ISO-8859-1"?><nfse>' +
    `<identificador>${identificador}</identificador>` +
    '<rps><nro_recibo_provisorio>15</nro_recibo_provisorio><serie_recibo_provisorio>1</serie_recibo_provisorio>' +
    '<data_emissao_recibo_provisorio>20/01/2026</data_emissao_recibo_provisorio>' +
    '<hora_emissao_recibo_provisorio>10:00:00</hora_emissao_recibo_provisorio></rps>' +
    `<nf><valor_total>${overrides.total ?? '100,00'}</valor_total><valor_desconto>0,00</valor_desconto>` +
    '<valor_ir>0,00</valor_ir><valor_inss>0,00</valor_inss><valor_contribuicao_social>0,00</valor_contribuicao_social>' +
    '<valor_rps>0,00</valor_rps><valor_pis>0,00</valor_pis><valor_cofins>0,00</valor_cofins></nf>' +
    `<prestador><cpfcnpj>${overrides.cnpj ?? CNPJ}</cpfcnpj><cidade>8291</cidade></prestador>` +
    '<tomador><endereco_informado>S</endereco_informado><tipo>F</tipo><cpfcnpj>99999999999</cpfcnpj>' +
    '<nome_razao_social>Empresa Teste</nome_razao_social><logradouro>Rua Jaco Finardi</logradouro>' +
    '<bairro>Centro</bairro><cidade>8291</cidade><cep>89160000</cep></tomador>' +
    '<itens><lista><tributa_municipio_prestador>S</tributa_municipio_prestador>' +
    '<codigo_local_prestacao_servico>8291</codigo_local_prestacao_servico>' +
    '<codigo_item_lista_servico>706</codigo_item_lista_servico><descritivo>Teste para emiss&#227;o</descritivo>' +
    '<aliquota_item_lista_servico>3,00</aliquota_item_lista_servico><situacao_tributaria>0</situacao_tributaria>' +
    '<valor_tributavel>100,00</valor_tributavel><valor_deducao>0,00</valor_deducao><valor_issrf>0,00</valor_issrf>' +
    '</lista></itens></nfse>'
  );
}

function form(files: string[], fileType = 'text/xml'): { body: string; type: string } {
  const boundary = '----teste';
  const body =
    files
      .map(
        (xml, i) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="arquivo${i}"; filename="n${i}.xml"\r\n` +
          `Content-Type: ${fileType}\r\n\r\n${xml}\r\n`,
      )
      .join('') + `--${boundary}--\r\n`;
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

async function post(xml: string | string[], options: { auth?: string | null; type?: string; raw?: boolean } = {}) {
  const f = options.raw ? { body: String(xml), type: options.type ?? 'text/xml' } : form([xml].flat());
  const headers: Record<string, string> = { 'content-type': f.type };
  const auth = options.auth === undefined ? basic(CNPJ, SENHA) : options.auth;
  if (auth) headers.authorization = auth;
  const res = await fetch(`${base}/municipal/ipm/producaorestrita`, { method: 'POST', headers, body: f.body });
  return { status: res.status, text: await res.text() };
}

const codeOf = (text: string) => /<codigo>(\d{5})/.exec(text)?.[1];
const tag = (text: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1];

beforeAll(async () => {
  server = await startSandboxServer({
    transport: { kind: 'http' },
    services: [
      createIpmService({
        signer: null as never,
        now: () => new Date(),
        logger: { info() {}, warn() {} },
        dataDir: null,
      }),
    ],
  });
  base = server.url;
  await fetch(`${base}/__sandbox/ipm/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ users: { [CNPJ]: SENHA } }),
  });
});
afterAll(async () => {
  await server?.close();
});

describe('IPM sandbox', () => {
  it('checks Basic auth: none → 401 00131, a wrong password → 401 00132', async () => {
    const none = await post(emission('a-1'), { auth: null });
    expect([none.status, codeOf(none.text)]).toEqual([401, '00131']);
    const wrong = await post(emission('a-1'), { auth: basic(CNPJ, 'errada') });
    expect([wrong.status, codeOf(wrong.text)]).toEqual([401, '00132']);
  });

  it('takes exactly one text/xml file part of multipart/form-data, with ISO-8859-1 declared', async () => {
    expect((await post(emission('m-1'), { raw: true })).status).toBe(400);
    expect(codeOf((await post([emission('m-1'), emission('m-2')])).text)).toBe('00900');
    expect(codeOf((await post(emission('m-1').replace('ISO-8859-1', 'UTF-8'))).text)).toBe('00901');
  });

  it('issues once per <identificador>: a resend answers the same note; decimal point and another prestador are refused', async () => {
    const first = await post(emission('id-1'));
    expect([first.status, codeOf(first.text)], first.text).toEqual([200, '00001']);
    expect(tag(first.text, 'situacao_codigo_nfse')).toBe('1');
    expect(tag(first.text, 'cod_verificador_autenticidade')).toMatch(/^\d{14}$/);
    const again = await post(emission('id-1'));
    expect(tag(again.text, 'numero_nfse')).toBe(tag(first.text, 'numero_nfse'));
    expect(codeOf((await post(emission('id-2', { total: '100.00' }))).text)).toBe('00010');
    expect(codeOf((await post(emission('id-3', { cnpj: '11444777000161' }))).text)).toBe('00133');
  });

  it('finds a note by RPS and by authenticity code, cancels it once (00226 after), and reports it cancelled', async () => {
    const issued = await post(emission('c-1'));
    const numero = tag(issued.text, 'numero_nfse');
    const codigo = tag(issued.text, 'cod_verificador_autenticidade');
    const rps = (n: string) =>
      `<?xml version="1.0" encoding="ISO-8859-1"?><consulta_rps><cidade>8291</cidade><serie_rps>1</serie_rps><numero_rps>${n}</numero_rps></consulta_rps>`;
    expect(tag((await post(rps('15'))).text, 'numero_nfse')).toBeDefined();
    expect(codeOf((await post(rps('999'))).text)).toBe('00224');
    const cancel = `<?xml version="1.0" encoding="ISO-8859-1"?><nfse><nf><numero>${numero}</numero><situacao>C</situacao><observacao>Cancelando</observacao></nf><prestador><cpfcnpj>${CNPJ}</cpfcnpj><cidade>8291</cidade></prestador></nfse>`;
    expect(tag((await post(cancel)).text, 'situacao_codigo_nfse')).toBe('2');
    expect(codeOf((await post(cancel)).text)).toBe('00226');
    const pesquisa = `<?xml version="1.0" encoding="ISO-8859-1"?><nfse><pesquisa><codigo_autenticidade>${codigo}</codigo_autenticidade></pesquisa></nfse>`;
    expect(tag((await post(pesquisa)).text, 'situacao_codigo_nfse')).toBe('2');
  });

  it('injects the kit faults: a server error answers 503 in the provider <retorno> shape', async () => {
    server.setFaults({ errorRate: 1 });
    const failed = await post(emission('f-1'));
    server.setFaults({});
    expect(failed.status).toBe(503);
    expect(failed.text).toContain('<retorno>');
  });
});

/** The legacy 1.00 form: login, senha, cidade (TOM) and the file as f1, no Basic; `query` is the URL's query. */
async function postLegacy(xml: string, fields: Record<string, string>, query = '?eletron=1') {
  const boundary = '----legado';
  const body =
    Object.entries(fields)
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
    `--${boundary}\r\nContent-Disposition: form-data; name="f1"; filename="n.xml"\r\nContent-Type: text/xml\r\n\r\n` +
    `${xml}\r\n--${boundary}--\r\n`;
  const res = await fetch(`${base}/municipal/ipm/producaorestrita${query}`, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

describe('IPM sandbox, legacy 1.00 form and public DANFSE link', () => {
  const fields = { login: CNPJ, senha: SENHA, cidade: '8291' };

  it('takes the credentials as form fields, checks them and the city, and answers XML only when asked', async () => {
    const issued = await postLegacy(emission('l-1'), fields);
    expect([issued.status, codeOf(issued.text)], issued.text).toEqual([200, '00001']);
    expect(codeOf((await postLegacy(emission('l-2'), { ...fields, senha: 'errada' })).text)).toBe('00132');
    expect(codeOf((await postLegacy(emission('l-3'), { ...fields, cidade: '8245' })).text)).toBe('00007');
    const page = await postLegacy(emission('l-4'), fields, '');
    expect(page.type).toMatch(/^text\/html/);
    expect(page.text).toContain('00001');
  });

  it('serves a real PDF of a note at its public link (no auth), and an HTML 404 for an unknown code', async () => {
    const issued = await post(emission('d-1'));
    const codigo = tag(issued.text, 'cod_verificador_autenticidade');
    const pdf = await fetch(`${base}/municipal/ipm/producaorestrita/?codauten=${codigo}`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString('latin1'),
    ).toBe('%PDF-');
    const unknown = await fetch(`${base}/municipal/ipm/producaorestrita/?codauten=00000000000000`);
    expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'text/html; charset=ISO-8859-1']);
    await unknown.text();
  });
});

describe('IPM sandbox persistence', () => {
  it('keeps what it issued and cancelled across a restart (dataDir)', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'ipm-sandbox-'));
    const deps = { signer: null as never, now: () => new Date(), logger: { info() {}, warn() {} }, dataDir: dir };
    const start = () => startSandboxServer({ transport: { kind: 'http' }, services: [createIpmService(deps)] });
    const saved = base;
    try {
      const first = await start();
      base = first.url;
      const issued = await post(emission('p-1'));
      await first.close();
      const second = await start();
      base = second.url;
      const again = await post(emission('p-1'));
      expect(tag(again.text, 'numero_nfse')).toBe(tag(issued.text, 'numero_nfse'));
      const next = await post(emission('p-2'));
      expect(Number(tag(next.text, 'numero_nfse'))).toBe(Number(tag(issued.text, 'numero_nfse')) + 1);
      await second.close();
    } finally {
      base = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
