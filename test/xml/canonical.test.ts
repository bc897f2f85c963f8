import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import { C14nCanonicalization, findAncestorNs } from 'xml-crypto';
import { scanCanonicalElement } from '../../src/xml/canonical.ts';
import { escapeXmlAttr, escapeXmlText, type SigningKey, signXml } from '../../src/xml/sign.ts';
import { hasTool } from '../support/tools.ts';
import { createTestSigningKey, verifyWithXmlCrypto, verifyWithXmlsec1 } from './fixtures.ts';

/** xml-crypto's inclusive C14N of the first element with that local name, as its signer computes it. */
function xmlCryptoC14n(xml: string, localName: string): string {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const xpath = `(//*[local-name(.)='${localName}'])[1]`;
  const node = doc.getElementsByTagNameNS('*', localName).item(0);
  if (!node) throw new Error(`no ${localName}`);
  return new C14nCanonicalization().process(node, { ancestorNamespaces: findAncestorNs(doc, xpath) });
}

function fastC14n(xml: string, localName: string): string {
  const scan = scanCanonicalElement(xml, localName);
  if (scan.kind !== 'found') throw new Error(`fast path refused: ${JSON.stringify(scan)}\n${xml}`);
  return scan.element.canonical;
}

/** mulberry32: a small deterministic PRNG so that failures can be replayed by seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHARS = [
  'a',
  'Z',
  '7',
  ' ',
  '&',
  '<',
  '>',
  '"',
  "'",
  '\r',
  '\n',
  '\t',
  'é',
  'ç',
  'ã',
  '€',
  '😀',
  '\u00A0',
  ']]',
  '=',
  '#',
];
const DEFAULT_URIS = ['http://www.sped.fazenda.gov.br/nfse', 'urn:example:b', ''];
const PREFIXES = ['p', 'q', 'xsi'];
const PREFIX_URIS = ['urn:example:p', 'urn:example:q', 'http://www.w3.org/2001/XMLSchema-instance'];
const NAMES = ['a', 'b', 'Item', 'x-y', 'z.w', 'vServ', '_u'];
const ATTRIBUTES = ['Id', 'alt', 'b', 'versao', 'z', 'zz', 'A'];

function generator(seed: number) {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const text = (max: number) => {
    let s = '';
    const n = Math.floor(random() * max);
    for (let i = 0; i < n; i++) s += pick(CHARS);
    return s;
  };

  /** A canonical element: declarations first and sorted, attributes sorted, C14N escapes, no redundancy. */
  function element(depth: number, scope: Map<string, string>, name?: string, rawAttributes?: string): string {
    const declarations = new Map<string, string>();
    if (random() < 0.2) {
      const uri = pick(DEFAULT_URIS);
      if ((scope.get('') ?? '') !== uri) declarations.set('', uri);
    }
    if (random() < 0.25) {
      const i = Math.floor(random() * PREFIXES.length);
      const uri = random() < 0.7 ? PREFIX_URIS[i] : `urn:example:alt${i}`;
      if (scope.get(PREFIXES[i]) !== uri) declarations.set(PREFIXES[i], uri);
    }
    const inner = new Map(scope);
    for (const [p, u] of declarations) inner.set(p, u);
    const bound = [...inner.keys()].filter((p) => p !== '');
    const qname = name ?? (bound.length > 0 && random() < 0.3 ? `${pick(bound)}:${pick(NAMES)}` : pick(NAMES));
    let tag = `<${qname}`;
    for (const p of [...declarations.keys()].sort()) {
      tag += p === '' ? ` xmlns="${declarations.get(p)}"` : ` xmlns:${p}="${declarations.get(p)}"`;
    }
    if (rawAttributes !== undefined) tag += rawAttributes;
    else for (const a of ATTRIBUTES.filter(() => random() < 0.3).sort()) tag += ` ${a}="${escapeXmlAttr(text(6))}"`;
    let content = '';
    const children = depth > 0 ? Math.floor(random() * 4) : random() < 0.7 ? 1 : 0;
    for (let i = 0; i < children; i++) {
      content += depth > 0 && random() < 0.6 ? element(depth - 1, inner) : escapeXmlText(text(8));
    }
    return `${tag}>${content}</${qname}>`;
  }

  /** Ancestors written loosely (attribute order, quotes, whitespace), siblings around, the target somewhere inside. */
  function document(): string {
    const ancestors: { name: string; declarations: [string, string][] }[] = [];
    const scope = new Map<string, string>();
    const levels = 1 + Math.floor(random() * 3);
    for (let i = 0; i < levels; i++) {
      const declarations: [string, string][] = [];
      if (random() < 0.7) declarations.push(['', pick(DEFAULT_URIS.slice(0, 2))]);
      for (let j = 0; j < PREFIXES.length; j++) if (random() < 0.3) declarations.push([PREFIXES[j], PREFIX_URIS[j]]);
      for (const [p, u] of declarations) scope.set(p, u);
      ancestors.push({ name: pick(['DPS', 'Envio', 'Lote', 'ListaRps']), declarations });
    }
    const bound = [...scope.keys()].filter((p) => p !== '');
    const targetName = bound.length > 0 && random() < 0.3 ? `${pick(bound)}:target` : 'target';
    const targetAttributes = ATTRIBUTES.filter((a) => a !== 'Id' && random() < 0.4).map(
      (a) => ` ${a}="${escapeXmlAttr(text(5))}"`,
    );
    targetAttributes.splice(Math.floor(random() * (targetAttributes.length + 1)), 0, ` Id="T${seed}"`);
    let xml = element(3, scope, targetName, targetAttributes.join(''));
    for (let i = ancestors.length - 1; i >= 0; i--) {
      const { name, declarations } = ancestors[i];
      const parts = declarations.map(([p, u]) => (p === '' ? `xmlns="${u}"` : `xmlns:${p}='${u}'`));
      parts.push(`versao = '1.0${i}'`);
      if (random() < 0.5) parts.push('xsi:type="t"'.replace('xsi:', bound.includes('xsi') ? 'xsi:' : ''));
      parts.sort(() => random() - 0.5);
      const before = random() < 0.4 ? `<sib a='1' >${escapeXmlText(text(4))}</sib >` : '';
      const after = random() < 0.4 ? '<sib/>' : '';
      xml = `<${name} ${parts.join('\n  ')}>${before}${xml}${after}</${name}\n>`;
    }
    return (random() < 0.3 ? '<?xml version="1.0" encoding="UTF-8"?>\n' : '') + xml;
  }

  return { document };
}

describe('fast canonicalization equals xml-crypto C14N', () => {
  it('on 600 generated documents (namespaces, prefixes, escapes, attribute order, astral characters)', () => {
    let withPrefixedTarget = 0;
    let withNestedDeclarations = 0;
    for (let seed = 1; seed <= 600; seed++) {
      const xml = generator(seed).document();
      const fast = fastC14n(xml, 'target');
      expect(fast, `seed ${seed}\n${xml}`).toBe(xmlCryptoC14n(xml, 'target'));
      if (/^<\w+:target/.test(fast)) withPrefixedTarget++;
      if (/.<[^>]* xmlns/.test(fast)) withNestedDeclarations++;
    }
    // The generator does exercise the interesting cases.
    expect(withPrefixedTarget).toBeGreaterThan(50);
    expect(withNestedDeclarations).toBeGreaterThan(100);
  });

  it('on hand-written edge cases', () => {
    const cases = [
      '<r xmlns="urn:a"><target Id="1" a="x">t</target></r>',
      '<r xmlns="urn:a"><target xmlns="" Id="1"><c xmlns="urn:b">t</c></target></r>',
      '<r xmlns:z="urn:z" xmlns:a="urn:a"><target Id="1" b="&quot;&amp;&lt;>\'&#x9;&#xA;&#xD;"><a:c>&amp;&lt;&gt;&#xD;"\'</a:c></target></r>',
      '<r xmlns:p="urn:p"><s xmlns:p="urn:q"><p:target Id="1"><p:c xmlns:p="urn:p"></p:c></p:target></s></r>',
      '<target Id="x"><e></e></target>',
      '<r><target Id="1" z="1" a="2" m="3">😀 €</target></r>',
    ];
    for (const xml of cases) expect(fastC14n(xml, 'target'), xml).toBe(xmlCryptoC14n(xml, 'target'));
  });
});

describe('documents outside the fast path fall back to xml-crypto', () => {
  const XMLSEC1 = hasTool('xmlsec1');
  let key: SigningKey;
  beforeAll(() => {
    key = createTestSigningKey();
  });

  const ns = 'xmlns="http://www.sped.fazenda.gov.br/nfse"';
  const unsupported: [string, string][] = [
    ['comment', `<DPS ${ns}><infDPS Id="D1"><a>1</a><!-- c --></infDPS></DPS>`],
    ['CDATA section', `<DPS ${ns}><infDPS Id="D1"><a><![CDATA[x < y & z]]></a></infDPS></DPS>`],
    ['self-closing tag', `<DPS ${ns}><infDPS Id="D1"><a/><b>1</b></infDPS></DPS>`],
    ['attribute order', `<DPS ${ns}><infDPS Id="D1"><a z="1" b="2">1</a></infDPS></DPS>`],
    ['text escaping', `<DPS ${ns}><infDPS Id="D1"><a>&quot;aspas&quot; &#39;</a></infDPS></DPS>`],
    ['text escaping', `<DPS ${ns}><infDPS Id="D1"><a>a > b</a></infDPS></DPS>`],
    ['text escaping', `<DPS ${ns}><infDPS Id="D1"><a>linha\r\nnova</a></infDPS></DPS>`],
    ['attribute layout', `<DPS ${ns}><infDPS Id="D1"><a b='1'>1</a></infDPS></DPS>`],
    ['attribute value escaping', `<DPS ${ns}><infDPS Id="D1"><a b="x&gt;y">1</a></infDPS></DPS>`],
    ['attribute value escaping', `<DPS ${ns}><infDPS Id="D1"><a b="tab\there">1</a></infDPS></DPS>`],
    ['redundant namespace declaration', `<DPS ${ns}><infDPS Id="D1"><a ${ns}>1</a></infDPS></DPS>`],
    ['namespace declaration after attribute', `<DPS ${ns}><infDPS Id="D1"><a b="1" xmlns="urn:x">1</a></infDPS></DPS>`],
    ['start tag layout', `<DPS ${ns}><infDPS Id="D1"><a  b="1">1</a></infDPS></DPS>`],
    ['end tag layout', `<DPS ${ns}><infDPS Id="D1"><a>1</a ></infDPS></DPS>`],
    ['processing instruction', `<?xml-stylesheet href="a.xsl"?><DPS ${ns}><infDPS Id="D1"><a>1</a></infDPS></DPS>`],
    [
      'DOCTYPE',
      `<!DOCTYPE DPS [<!ATTLIST infDPS versao CDATA "9">]><DPS ${ns}><infDPS Id="D1"><a>1</a></infDPS></DPS>`,
    ],
    ['xml:* attribute on an ancestor', `<DPS ${ns}><x xml:lang="pt"></x><infDPS Id="D1"><a>1</a></infDPS></DPS>`],
    ['prefixed attribute', `<DPS ${ns} xmlns:x="urn:x"><infDPS Id="D1"><a x:b="1">1</a></infDPS></DPS>`],
  ];

  it.each(unsupported)('%s: %s', (reason, xml) => {
    expect(scanCanonicalElement(xml, 'infDPS')).toEqual({ kind: 'unsupported', reason });
    const signed = signXml(xml, { elementName: 'infDPS', key });
    const verified = verifyWithXmlCrypto(signed, key.certificatePem);
    expect(verified.ok, verified.error).toBe(true);
    if (XMLSEC1) {
      const result = verifyWithXmlsec1(signed, key.certificatePem, 'infDPS');
      expect(result.ok, result.output).toBe(true);
    }
  });

  it('accepts the usual XML declarations on the fast path', () => {
    const body = `<DPS ${ns}><infDPS Id="D1"><a>1</a></infDPS></DPS>`;
    for (const declaration of [
      '<?xml version="1.0"?>',
      "<?xml version='1.0' encoding='utf-8'?>\n",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>\r\n',
    ]) {
      expect(scanCanonicalElement(declaration + body, 'infDPS').kind).toBe('found');
      expect(signXml(declaration + body, { elementName: 'infDPS', key }).startsWith(declaration + '<DPS')).toBe(true);
    }
    const odd = '<?xml encoding="UTF-8" version="1.0"?>' + body;
    expect(scanCanonicalElement(odd, 'infDPS')).toEqual({ kind: 'unsupported', reason: 'xml declaration' });
  });

  it('refuses the two cases where xml-crypto departs from C14N instead of producing a bad signature', () => {
    const pi = `<DPS ${ns}><infDPS Id="D1"><?pi x?><a>1</a></infDPS></DPS>`;
    expect(scanCanonicalElement(pi, 'infDPS')).toEqual({ kind: 'unsupported', reason: 'processing instruction' });
    expect(() => signXml(pi, { elementName: 'infDPS', key })).toThrow(/processing instructions/);
    const lang = `<DPS ${ns} xml:lang="pt"><infDPS Id="D1"><a>1</a></infDPS></DPS>`;
    expect(scanCanonicalElement(lang, 'infDPS')).toEqual({
      kind: 'unsupported',
      reason: 'xml:* attribute on an ancestor',
    });
    expect(() => signXml(lang, { elementName: 'infDPS', key })).toThrow(/xml:\* attributes/);
  });

  it('signatures made on generated documents verify with xmlsec1', () => {
    if (!XMLSEC1) return;
    for (let seed = 1000; seed < 1012; seed++) {
      const xml = generator(seed).document();
      const signed = signXml(xml, { elementName: 'target', key, algorithm: seed % 2 ? 'rsa-sha1' : 'rsa-sha256' });
      const result = verifyWithXmlsec1(signed, key.certificatePem, 'target');
      expect(result.ok, `seed ${seed}\n${signed}\n${result.output}`).toBe(true);
    }
  });
});
