import { describe, expect, it } from 'vitest';
import { nextAttemptAt } from '../../src/webhooks/deliveries.ts';
import {
  isValidStandardSecret,
  signatureHeaders,
  standardSignature,
  svcSignature,
} from '../../src/webhooks/signing.ts';

/** Signatures against published values, and the schedule arithmetic on its own. */

describe('signatures', () => {
  it('reproduces the test vector of the Standard Webhooks specification (whsec_ secret)', () => {
    expect(
      standardSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('X-Svc-Signature is the lowercase hex HMAC-SHA256 of the body keyed with the secret text', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
    expect(svcSignature('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('signs with both secrets during a rotation, the current one first, and not at all without a secret', () => {
    const headers = signatureHeaders({ current: 'new-secret', previous: 'old-secret' }, 'id', 1, '{}');
    expect(headers['webhook-signature']).toBe(
      `${standardSignature('new-secret', 'id', 1, '{}')} ${standardSignature('old-secret', 'id', 1, '{}')}`,
    );
    expect(headers['x-svc-signature']).toBe(svcSignature('new-secret', '{}'));
    expect(signatureHeaders({ current: null, previous: null }, 'id', 1, '{}')).toEqual({});
  });

  it('accepts whsec_ secrets only with base64 of 16 to 64 bytes', () => {
    expect(isValidStandardSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBe(true);
    expect(isValidStandardSecret(`whsec_${Buffer.alloc(8).toString('base64')}`)).toBe(false);
    expect(isValidStandardSecret(`whsec_${Buffer.alloc(65).toString('base64')}`)).toBe(false);
    expect(isValidStandardSecret('whsec_not base64!')).toBe(false);
    expect(isValidStandardSecret('any other text')).toBe(true);
  });
});

describe('nextAttemptAt', () => {
  const t0 = new Date('2026-01-01T00:00:00Z');
  const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

  it('follows 1, 5, 30 and 120 minutes after the first attempt', () => {
    expect([1, 2, 3, 4].map((done) => nextAttemptAt(t0, done, at(0.1)).toISOString())).toEqual([
      at(1).toISOString(),
      at(5).toISOString(),
      at(30).toISOString(),
      at(120).toISOString(),
    ]);
  });

  it('after an outage, waits the schedule gap from now instead of firing the overdue attempts at once', () => {
    // the 2nd attempt (due at minute 1) ran at minute 40: the 3rd is due 4 minutes later, not at once
    expect(nextAttemptAt(t0, 2, at(40)).toISOString()).toBe(at(44).toISOString());
    expect(nextAttemptAt(t0, 3, at(40)).toISOString()).toBe(at(65).toISOString());
  });
});
