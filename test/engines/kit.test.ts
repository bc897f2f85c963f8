import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { authorize, MissingCredentialError } from '../../src/engines/kit/auth.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { defineFamily, type FamilyDefinition } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { readSoapAnswer, soapEnvelope, soapParts } from '../../src/engines/kit/soap.ts';
import type { IssuedDocument, Outcome } from '../../src/engines/types.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The engine kit's own pieces: SOAP envelopes and answers in the three idioms, the auth kinds applied to a real
 * HTTP request, and the base pipeline's handling of an asynchronous family (pending → poll → issued) and of missing
 * credentials, against a real HTTP server on loopback that plays a minimal asynchronous provider.
 */

let certificate: A1Certificate;
beforeAll(() => {
  const files = createA1Certificate({ cnpj: '11222333000181', name: 'EMPRESA', password: 'x' });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  certificate = read.value;
});

describe('SOAP envelopes', () => {
  it('writes a SOAP 1.1 document/literal call with escaped string parameters and a quoted SOAPAction', () => {
    const { body, headers } = soapEnvelope({
      version: '1.1',
      namespace: 'http://nfse.abrasf.org.br',
      operation: 'RecepcionarLoteRps',
      soapAction: 'http://nfse.abrasf.org.br/RecepcionarLoteRps',
      parts: soapParts.documentLiteral({ nfseCabecMsg: '<cabecalho versao="2.04"/>', nfseDadosMsg: '<a>&</a>' }),
    });
    expect(headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(headers.soapaction).toBe('"http://nfse.abrasf.org.br/RecepcionarLoteRps"');
    expect(body).toContain('<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/">');
    expect(body).toContain('<ns:RecepcionarLoteRps xmlns:ns="http://nfse.abrasf.org.br">');
    expect(body).toContain('<nfseCabecMsg>&lt;cabecalho versao="2.04"/&gt;</nfseCabecMsg>');
    expect(body).toContain('<nfseDadosMsg>&lt;a&gt;&amp;&lt;/a&gt;</nfseDadosMsg>');
  });

  it('writes SOAP 1.2 with the action in the content type, rpc arguments and CDATA strings', () => {
    const rpc = soapEnvelope({
      version: '1.2',
      namespace: 'http://homologacao.ginfes.com.br',
      operation: 'RecepcionarLoteRpsV3',
      soapAction: 'urn:RecepcionarLoteRpsV3',
      parts: soapParts.rpcArguments(['<cabecalho/>', '<lote/>']),
    });
    expect(rpc.headers['content-type']).toBe('application/soap+xml; charset=utf-8; action="urn:RecepcionarLoteRpsV3"');
    expect(rpc.body).toContain('<arg0>&lt;cabecalho/&gt;</arg0><arg1>&lt;lote/&gt;</arg1>');
    const cdata = soapEnvelope({
      version: '1.1',
      namespace: 'http://ws.sil',
      operation: 'enviar',
      parts: soapParts.cdataString('xml', '<a><![CDATA[x]]></a>'),
    });
    // a `]]>` inside the payload is split so the CDATA section stays well formed
    expect(cdata.body).toContain('<xml><![CDATA[<a><![CDATA[x]]]]><![CDATA[></a>]]></xml>');
    expect(readSoapAnswer(cdata.body)).toEqual({ kind: 'body', operation: 'enviar', result: '<a><![CDATA[x]]></a>' });
  });

  it('reads answers: escaped string results, element results, and SOAP 1.1 and 1.2 faults', () => {
    const env11 = 'http://schemas.xmlsoap.org/soap/envelope/';
    const escaped = `<s:Envelope xmlns:s="${env11}"><s:Body><ns2:RecepcionarLoteRpsV3Response xmlns:ns2="urn:x"><return>&lt;EnviarLoteRpsResposta&gt;&lt;Protocolo&gt;123&lt;/Protocolo&gt;&lt;/EnviarLoteRpsResposta&gt;</return></ns2:RecepcionarLoteRpsV3Response></s:Body></s:Envelope>`;
    expect(readSoapAnswer(escaped)).toEqual({
      kind: 'body',
      operation: 'RecepcionarLoteRpsV3Response',
      result: '<EnviarLoteRpsResposta><Protocolo>123</Protocolo></EnviarLoteRpsResposta>',
    });
    const elements = `<s:Envelope xmlns:s="${env11}"><s:Body><GerarNfseResponse xmlns="urn:y"><outputXML><GerarNfseResposta xmlns="urn:z"><Numero>7</Numero></GerarNfseResposta></outputXML></GerarNfseResponse></s:Body></s:Envelope>`;
    const read = readSoapAnswer(elements);
    expect(read.kind).toBe('body');
    if (read.kind === 'body') expect(read.result).toContain('<Numero>7</Numero>');
    const fault11 = `<s:Envelope xmlns:s="${env11}"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>Bad request</faultstring></s:Fault></s:Body></s:Envelope>`;
    expect(readSoapAnswer(fault11)).toEqual({ kind: 'fault', code: 's:Client', reason: 'Bad request' });
    const fault12 = `<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><e:Fault><e:Code><e:Value>e:Sender</e:Value></e:Code><e:Reason><e:Text xml:lang="pt">Erro</e:Text></e:Reason></e:Fault></e:Body></e:Envelope>`;
    expect(readSoapAnswer(fault12)).toEqual({ kind: 'fault', code: 'e:Sender', reason: 'Erro' });
    expect(readSoapAnswer('<html>502</html>').kind).toBe('unreadable');
    expect(readSoapAnswer('not xml at all <').kind).toBe('unreadable');
  });
});

describe('auth kinds', () => {
  const base = { method: 'POST' as const, url: 'https://x/y', headers: { 'content-type': 'text/xml' } };
  it('applies mTLS, Basic, Bearer and a header token; refuses a missing credential by name', () => {
    expect(authorize(base, 'mtls', certificate, {}).certificate).toBe(certificate);
    const basic = authorize(base, 'basic', certificate, { basicAuthUsuario: 'user', basicAuthSenha: 'pá:ss' });
    expect(basic.certificate).toBeNull();
    expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('user:pá:ss').toString('base64')}`);
    expect(authorize(base, 'bearer', certificate, { accessToken: 't0k' }).headers.authorization).toBe('Bearer t0k');
    const token = authorize(base, 'header-token', certificate, { authorizationKey: 'k' }, { headerName: 'X-Chave' });
    expect(token.headers['x-chave']).toBe('k');
    expect(authorize(base, 'signature', certificate, {}).certificate).toBeNull();
    expect(() => authorize(base, 'basic', certificate, { basicAuthUsuario: 'user' })).toThrow(MissingCredentialError);
  });
});

/** A minimal asynchronous provider: a lot is answered with a protocol; the protocol is processed on the 3rd query. */
describe('base pipeline with an asynchronous family', () => {
  let server: Server;
  let url: string;
  const polls = new Map<string, number>();
  const seen: { authorization?: string; body: string }[] = [];

  beforeAll(async () => {
    let protocols = 0;
    server = createServer(async (req: IncomingMessage, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen.push({ authorization: req.headers.authorization, body });
      if (req.url === '/lote') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(`<Protocolo>P${++protocols}</Protocolo>`);
        return;
      }
      const protocol = /^\/lote\/(P\d+)$/.exec(req.url ?? '')?.[1];
      if (!protocol) return void res.writeHead(404).end();
      const n = (polls.get(protocol) ?? 0) + 1;
      polls.set(protocol, n);
      res.writeHead(200, { 'content-type': 'text/xml' });
      res.end(
        n < 3
          ? '<Situacao>2</Situacao>'
          : `<Situacao>4</Situacao><Numero>${protocol.slice(1)}</Numero><Codigo>ABC</Codigo>`,
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const readLot = (text: string): Outcome<IssuedDocument> => {
    const numero = /<Numero>(\d+)<\/Numero>/.exec(text)?.[1];
    if (!numero) return { kind: 'pending', protocol: 'same' };
    const verificationCode = /<Codigo>(\w+)<\/Codigo>/.exec(text)?.[1] ?? null;
    return {
      kind: 'ok',
      value: { chave: null, numero, verificationCode, emittedAt: new Date(), xml: text, ambiente: 2 },
    };
  };

  const family: FamilyDefinition = defineFamily({
    id: 'abrasf-v2',
    layout: 'test lot layout',
    transport: 'http-xml',
    auth: 'basic',
    capabilities: {
      cancel: false,
      substitution: false,
      batch: true,
      mode: 'async',
      pdf: 'none',
      homologation: true,
      reconcile: true,
    },
    check: () => [],
    declaration: {
      build: (input) => ({ id: `RPS${input.number}`, xml: `<Rps><Numero>${input.number}</Numero></Rps>` }),
      signedElement: null,
      schema: null,
      schemaErrorCode: 'RPS_SCHEMA_INVALID',
    },
    operations: {
      emit: {
        request: (document, context) => ({
          method: 'POST',
          url: `${context.endpoints.url('emit', context.ambiente, context.municipality)}/lote`,
          headers: { 'content-type': 'text/xml' },
          body: document.xml,
        }),
        parse: (answer) => {
          const protocol = /<Protocolo>(\w+)<\/Protocolo>/.exec(answer.body)?.[1];
          return protocol ? { kind: 'pending', protocol } : { kind: 'unknown', reason: 'no protocol' };
        },
      },
      poll: {
        request: ({ protocol }, context) => ({
          method: 'GET',
          url: `${context.endpoints.url('poll', context.ambiente, context.municipality)}/lote/${protocol}`,
          headers: {},
        }),
        parse: (answer, { protocol }) => {
          const outcome = readLot(answer.body);
          return outcome.kind === 'pending' ? { kind: 'pending', protocol } : outcome;
        },
      },
      query: {
        request: () => ({ method: 'GET', url: `${url}/none`, headers: {} }),
        parse: () => ({ kind: 'ok', value: null }),
      },
    },
    alreadyProcessedCodes: ['E10'],
    alreadyCancelledCodes: [],
  });

  it('answers pending with the protocol, polls until issued, and authenticates every request with Basic', async () => {
    const http = new GovernmentHttpClient({ connectMs: 1000, responseMs: 2000 }, null);
    const credentials = { basicAuthUsuario: 'prefeitura', basicAuthSenha: 'segredo' };
    const engine = createEngine(family, {
      http,
      endpoints: { url: () => url },
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    const prepared = engine.prepare({
      project: fiscalProfile(),
      invoice: {} as never,
      serie: '1',
      number: 42,
      issuedAt: new Date(),
      certificate,
    });
    expect(prepared).toEqual({ kind: 'ok', value: { id: 'RPS42', xml: '<Rps><Numero>42</Numero></Rps>' } });
    if (prepared.kind !== 'ok') return;
    const connection = { certificate, ambiente: 2 as const, credentials };
    const sent = await engine.issue(prepared.value, connection);
    expect(sent).toEqual({ kind: 'pending', protocol: 'P1' });
    expect(await engine.poll('P1', prepared.value, connection)).toEqual({ kind: 'pending', protocol: 'P1' });
    expect(await engine.poll('P1', prepared.value, connection)).toEqual({ kind: 'pending', protocol: 'P1' });
    const issued = await engine.poll('P1', prepared.value, connection);
    expect(issued.kind === 'ok' && [issued.value.numero, issued.value.verificationCode]).toEqual(['1', 'ABC']);
    expect(seen.map((s) => s.authorization)).toEqual(
      Array(4).fill(`Basic ${Buffer.from('prefeitura:segredo').toString('base64')}`),
    );
    // without the credential the provider is never called: a permanent refusal naming it
    const without = createEngine(family, {
      http,
      endpoints: { url: () => url },
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    const refused = await without.issue(prepared.value, { certificate, ambiente: 2 });
    expect(refused.kind === 'rejected' && refused.errorCode).toBe('ENGINE_CREDENTIALS_MISSING');
    expect(seen).toHaveLength(4);
    // spec 4.8.3: the project's endpoint override wins over the engine's endpoints
    const misdirected = createEngine(family, {
      http,
      endpoints: { url: () => 'http://127.0.0.1:9/nowhere' },
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    expect(await misdirected.issue(prepared.value, { ...connection, endpointOverride: url })).toEqual({
      kind: 'pending',
      protocol: 'P2',
    });
    seen.pop();
    // a family without cancellation refuses it without calling the provider
    const cancel = await engine.cancel(
      { chave: null, numero: '1', verificationCode: 'ABC', ambiente: 2, providerCnpj: '11222333000181' },
      null,
      connection,
    );
    expect(cancel.kind === 'rejected' && cancel.errorCode).toBe('CANCEL_NOT_SUPPORTED');
    await http.close();
  });
});
