import { createServer } from 'node:net';
import { DOMParser } from '@xmldom/xmldom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedXml } from 'xml-crypto';
import type { A1Certificate } from '../../src/certificates/pkcs12.ts';
import type { NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import type { ProjectCredentials } from '../../src/engines/kit/auth.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import type { Endpoints, FamilyDefinition } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { Connection, EngineFamily, IssuedDocument, PreparedDocument } from '../../src/engines/types.ts';
import { validateXml } from '../../src/xml/xsd.ts';

/**
 * The conformance suite every engine family runs against its sandbox (design-lessons: "one conformance suite run by
 * every engine"). It drives the family's engine exactly as the jobs do — built by the kit from the definition, over
 * real HTTP/TLS to the family's sandbox — and checks: build, sign (verified by an independent verifier), XSD-valid,
 * issue, query/reconcile, cancel, a business rejection with the provider's code, transient vs unknown vs
 * permanent classification under injected faults, and, for asynchronous families, pending → polled → issued.
 */

/** The faults every sandbox of the kit understands (shares of requests, 0..1). */
export interface SandboxFaults {
  latencyMs?: number;
  errorRate?: number;
  dropBeforeProcessRate?: number;
  commitThenDropRate?: number;
}

export interface ConformanceEnvironment {
  endpoints: Endpoints;
  caPem: string;
  /** the provider's A1 certificate, trusted by the sandbox */
  certificate: A1Certificate;
  setFaults(faults: SandboxFaults): Promise<void>;
  close(): Promise<void>;
}

export interface ConformanceTarget {
  family: FamilyDefinition;
  start(): Promise<ConformanceEnvironment>;
  project: ProjectFiscalProfile;
  /** a valid invoice of `project`, new every call */
  invoice(): NormalizedInvoice;
  /** the project's engine credentials (Basic, Bearer…) when the family's auth needs them */
  credentials?: ProjectCredentials;
  /** a declaration the government refuses by a business rule, and the provider's code it must come back with */
  rejection: { project: ProjectFiscalProfile; invoice: NormalizedInvoice; code: string };
}

let numbers = Date.now() % 1_000_000;

async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Verifies the enveloped signature with xml-crypto (not our signer), using the certificate inside the signature. */
function signatureVerifies(xml: string, element: string): boolean {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const signature = doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'Signature')[0];
  if (!signature) return false;
  const certificate = doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'X509Certificate')[0];
  const pem = `-----BEGIN CERTIFICATE-----\n${certificate?.textContent?.trim()}\n-----END CERTIFICATE-----\n`;
  const verifier = new SignedXml({ publicCert: pem });
  verifier.loadSignature(signature as unknown as Node);
  const signed = doc.getElementsByTagName(element)[0];
  if (!signed) return false;
  return verifier.checkSignature(xml);
}

export function describeConformance(target: ConformanceTarget): void {
  const { family } = target;
  describe(`conformance: ${family.id} (${family.layout})`, () => {
    let env: ConformanceEnvironment;
    let http: GovernmentHttpClient;
    let engine: EngineFamily;
    let connection: Connection;

    const engineFor = (endpoints: Endpoints) =>
      createEngine(family, { http, endpoints, signatureAlgorithm: 'rsa-sha1', validateBeforeSend: true });

    const prepare = (project = target.project, invoice = target.invoice()): PreparedDocument => {
      const prepared = engine.prepare({
        project,
        invoice,
        serie: project.serieNfse,
        number: ++numbers,
        issuedAt: new Date(Date.now() - 60_000),
        certificate: env.certificate,
      });
      if (prepared.kind !== 'ok') throw new Error(`prepare: ${JSON.stringify(prepared)}`);
      return prepared.value;
    };

    const issueOne = async (): Promise<{ document: PreparedDocument; issued: IssuedDocument }> => {
      const document = prepare();
      const outcome = await engine.issue(document, connection);
      if (outcome.kind === 'pending') {
        for (let i = 0; i < 50; i++) {
          const polled = await engine.poll(outcome.protocol, document, connection);
          if (polled.kind === 'ok') return { document, issued: polled.value };
          expect(polled.kind, JSON.stringify(polled)).toBe('pending');
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('still pending after 50 polls');
      }
      expect(outcome.kind, JSON.stringify(outcome)).toBe('ok');
      if (outcome.kind !== 'ok') throw new Error('not issued');
      return { document, issued: outcome.value };
    };

    beforeAll(async () => {
      env = await target.start();
      http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
      engine = engineFor(env.endpoints);
      connection = {
        certificate: env.certificate,
        ambiente: target.project.ambiente,
        municipality: target.project.codigoMunicipio,
        ...(target.credentials ? { credentials: target.credentials } : {}),
      };
    });
    afterAll(async () => {
      await http?.close();
      await env?.close();
    });

    it('builds, signs and validates: the signature verifies independently and the message satisfies its XSD', () => {
      const document = prepare();
      expect(document.id).not.toBe('');
      if (family.declaration.signedElement) {
        expect(signatureVerifies(document.xml, family.declaration.signedElement)).toBe(true);
        const tampered = document.xml.replace(
          /(<\w+:?\w*>)(\d)/,
          (_m, tag: string, digit: string) => `${tag}${(Number(digit) + 1) % 10}`,
        );
        if (tampered !== document.xml)
          expect(signatureVerifies(tampered, family.declaration.signedElement)).toBe(false);
      }
      const schema = family.declaration.schemaFor?.(document.xml) ?? family.declaration.schema;
      if (schema) {
        const view = family.declaration.schemaView?.(document.xml) ?? document.xml;
        expect(validateXml(schema, view)).toEqual({ ok: true });
      }
    });

    it('refuses before sending what its own layout rules refuse (check is the same at the edge and in the job)', () => {
      const unmet = engine.checkRequest(target.project, target.invoice());
      expect(unmet).toEqual([]);
    });

    it('issues a note and finds the same note again by its declaration (reconciliation)', async () => {
      const { document, issued } = await issueOne();
      expect(issued.numero).toMatch(/\S/);
      expect(issued.xml).toMatch(/^<|^<\?xml/);
      expect(issued.chave ?? issued.verificationCode).toBeTruthy();
      const found = await engine.reconcile(document, connection);
      expect(found.kind, JSON.stringify(found)).toBe('ok');
      if (found.kind === 'ok') {
        expect(found.value?.numero).toBe(issued.numero);
        expect(found.value?.chave ?? null).toBe(issued.chave ?? null);
      }
    });

    it('reconciles a declaration the government never received as "none" (ok null), never as an error', async () => {
      const found = await engine.reconcile(prepare(), connection);
      expect(found).toEqual({ kind: 'ok', value: null });
    });

    it('turns a resend of a processed declaration into an unknown outcome that reconciliation resolves', async () => {
      const { document, issued } = await issueOne();
      const again = await engine.issue(document, connection);
      expect(['unknown', 'ok']).toContain(again.kind);
      if (again.kind === 'ok') expect(again.value.numero).toBe(issued.numero);
      const found = await engine.reconcile(document, connection);
      expect(found.kind === 'ok' && found.value?.numero).toBe(issued.numero);
    });

    it('comes back rejected, with the provider code, for a declaration a business rule refuses', async () => {
      const document = prepare(target.rejection.project, target.rejection.invoice);
      const outcome = await engine.issue(document, connection);
      expect(outcome.kind, JSON.stringify(outcome)).toBe('rejected');
      if (outcome.kind === 'rejected') {
        expect([outcome.errorCode, ...outcome.errors.map((e) => e.Codigo)]).toContain(target.rejection.code);
      }
    });

    it('cancels an issued note, finds the cancellation, and answers a second cancellation as "already cancelled"', async () => {
      if (!family.capabilities.cancel) return expect(family.operations.cancel).toBeUndefined();
      const { issued } = await issueOne();
      const note = {
        chave: issued.chave,
        numero: issued.numero,
        verificationCode: issued.verificationCode ?? null,
        ambiente: issued.ambiente,
        // as the cancel job knows it (São Paulo keys a note by CCM + number)
        inscricaoMunicipal: target.project.inscricaoMunicipal,
      };
      const municipal = {
        codigoMunicipio: target.project.codigoMunicipio,
        inscricaoMunicipal: target.project.inscricaoMunicipal,
      };
      const cancelled = await engine.cancel(
        { ...note, providerCnpj: target.project.cnpj, ...municipal },
        'Erro na emissão',
        connection,
      );
      expect(cancelled.kind, JSON.stringify(cancelled)).toBe('ok');
      const found = await engine.reconcileCancellation(note, connection);
      // a provider with no message to ask for a cancellation (Tinus: no Faixa/Prestado query) answers "none known"
      const asks = family.operations.queryCancellation !== undefined;
      expect(found.kind === 'ok' && (found.value !== null || !asks)).toBe(true);
      const again = await engine.cancel(
        { ...note, providerCnpj: target.project.cnpj, ...municipal },
        'Erro na emissão',
        connection,
      );
      expect(again.kind).toBe('rejected');
      if (again.kind === 'rejected') {
        const codes = [again.errorCode, ...again.errors.map((e) => e.Codigo)];
        expect(codes.some((c) => family.alreadyCancelledCodes.includes(c))).toBe(true);
      }
    });

    /** Sends a new declaration under `faults`, then asks the government what it holds for it, with no faults. */
    const underFaults = async (faults: SandboxFaults) => {
      const document = prepare();
      await env.setFaults(faults);
      let outcome: Awaited<ReturnType<EngineFamily['issue']>>;
      try {
        outcome = await engine.issue(document, connection);
      } finally {
        await env.setFaults({});
      }
      return { outcome, found: await engine.reconcile(document, connection) };
    };

    it('classifies a server error as transient, and nothing is issued', async () => {
      const { outcome, found } = await underFaults({ errorRate: 1 });
      expect(outcome.kind, JSON.stringify(outcome)).toBe('transient');
      expect(found).toEqual({ kind: 'ok', value: null });
    });

    it('classifies a refused connection as transient (nothing can have been sent)', async () => {
      const port = await closedPort();
      const nowhere = engineFor({ url: () => `https://127.0.0.1:${port}/nowhere` });
      const outcome = await nowhere.issue(prepare(), connection);
      expect(outcome.kind, JSON.stringify(outcome)).toBe('transient');
    });

    it('classifies an answer lost after the government committed as unknown, and reconciliation finds the note', async () => {
      const { outcome, found } = await underFaults({ commitThenDropRate: 1 });
      expect(outcome.kind, JSON.stringify(outcome)).toBe('unknown');
      expect(found.kind === 'ok' && found.value !== null, JSON.stringify(found)).toBe(true);
    });

    it('classifies a connection dropped before processing as unknown, and reconciliation finds nothing to resend over', async () => {
      const { outcome, found } = await underFaults({ dropBeforeProcessRate: 1 });
      expect(outcome.kind, JSON.stringify(outcome)).toBe('unknown');
      expect(found).toEqual({ kind: 'ok', value: null });
    });

    it.skipIf(family.capabilities.mode === 'sync')(
      'answers pending with a protocol, and the polls end issued',
      async () => {
        const document = prepare();
        const outcome = await engine.issue(document, connection);
        expect(outcome.kind).toBe('pending');
        const { issued } = await issueOne();
        expect(issued.numero).toMatch(/\S/);
      },
    );
  });
}
