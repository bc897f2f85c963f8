import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseXmlLight } from '../../src/xml/light-read.ts';
import {
  child,
  childElements,
  children,
  descendantText,
  findDescendant,
  parseXml,
  text,
  withoutSignatures,
} from '../../src/xml/read.ts';

const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
const SAMPLES = new URL('../../../shared/reference/national/samples/', import.meta.url).pathname;
const BIG_SAMPLE = join(FIXTURES, 'national/ExemploPisZeradoCofinsSobreFaturamentoPreenchido.xml');

/** The published samples have a raw `&` in a name: escape it, as bench/danfse.ts does. */
const load = (file: string) => readFileSync(file, 'utf8').replace(/&(?!amp;|lt;|gt;|quot;|apos;|#)/g, '&amp;');

const xmlFiles = [FIXTURES, SAMPLES]
  .filter((dir) => existsSync(dir))
  .flatMap((dir) =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.xml'))
      .map((name) => join(dir, name)),
  )
  .sort();

function roots(xml: string): [Element, Element] {
  const dom = parseXml(xml);
  const light = parseXmlLight(xml);
  if (!dom.ok) throw new Error(`xmldom refused it: ${dom.message}`);
  if (!light.ok) throw new Error(`light refused it: ${light.message}`);
  return [dom.root, light.root];
}

/**
 * Where the light tree differs from xmldom's, element by element: names, namespace (xmldom answers undefined or ''
 * for none, light null), every attribute xmldom lists, textContent, and the sequence of child elements.
 */
function differences(dom: Element, light: Element, path = `/${dom.tagName}`, out: string[] = [], count = [0]) {
  const check = (what: string, expected: unknown, actual: unknown) => {
    if (expected !== actual)
      out.push(`${path} ${what}: xmldom ${JSON.stringify(expected)}, light ${JSON.stringify(actual)}`);
  };
  count[0]++;
  check('localName', dom.localName, light.localName);
  check('tagName', dom.tagName, light.tagName);
  check('nodeName', dom.nodeName, light.nodeName);
  check('namespaceURI', dom.namespaceURI || null, light.namespaceURI);
  const names = Array.from(dom.attributes, (attr) => attr.name);
  check('attribute names', names.join(' '), light.getAttributeNames().join(' '));
  for (const name of names) {
    check(`@${name}`, dom.getAttribute(name), light.getAttribute(name));
    check(`hasAttribute(${name})`, true, light.hasAttribute(name));
  }
  check('textContent', dom.textContent, light.textContent);
  check('trimmed textContent', dom.textContent?.trim(), light.textContent?.trim());
  const [domChildren, lightChildren] = [childElements(dom), childElements(light)];
  check('child elements', domChildren.map((e) => e.tagName).join(' '), lightChildren.map((e) => e.tagName).join(' '));
  // Comments (8) and processing instructions (7) are dropped by the light parser.
  const kept = Array.from(dom.childNodes).filter((n) => n.nodeType !== 7 && n.nodeType !== 8);
  check('child node types', kept.map((n) => n.nodeType).join(), Array.from(light.childNodes, (n) => n.nodeType).join());
  domChildren.forEach((c, i) => {
    if (lightChildren[i]) differences(c, lightChildren[i], `${path}/${c.tagName}[${i}]`, out, count);
  });
  return { out, elements: count[0] };
}

describe('xml/light-read.ts: the same tree as xmldom on real documents', () => {
  it('finds the fixtures and the published samples', () => {
    expect(xmlFiles.length).toBeGreaterThanOrEqual(3);
  });

  for (const file of xmlFiles) {
    const name = relative(join(FIXTURES, '..'), file);
    it(`${name} (whole, and without signatures)`, () => {
      const xml = load(file);
      for (const variant of [xml, withoutSignatures(xml)]) {
        const { out, elements } = differences(...roots(variant));
        expect(out).toEqual([]);
        expect(elements).toBeGreaterThan(10);
      }
    });
  }
});

describe('xml/light-read.ts: focused cases', () => {
  it('decodes entities and character references in text and attribute values', () => {
    const xml =
      '<a x="&lt;&#65;&#x42;&amp;lt;&quot;&apos;&gt;">&amp;lt; &#233;&#x1F600; &quot;&apos;&gt; &amp;amp;</a>';
    const [dom, light] = roots(xml);
    expect(light.getAttribute('x')).toBe('<AB&lt;"\'>');
    expect(light.textContent).toBe('&lt; é😀 "\'> &amp;');
    expect(differences(dom, light).out).toEqual([]);
  });

  it('normalises attribute whitespace and line ends as XML does', () => {
    const [dom, light] = roots('<a x="\t1\r\n2\r3\n4&#10;&#9;&#13;">x\r\ny\rz&#13;<b/></a>');
    expect(light.getAttribute('x')).toBe(' 1 2 3 4\n\t\r');
    expect(light.textContent).toBe('x\ny\nz\r');
    expect(differences(dom, light).out).toEqual([]);
  });

  it('keeps CDATA as nodes of type 4 and drops comments and processing instructions', () => {
    const xml = '<a>x<!-- c -->y<?pi data?><![CDATA[<b>&amp;\r\n</b>]]><b>z</b></a>';
    const [dom, light] = roots(xml);
    expect(light.textContent).toBe('xy<b>&amp;\n</b>z');
    expect(Array.from(light.childNodes, (n) => n.nodeType)).toEqual([3, 3, 4, 1]);
    expect(Array.from(light.childNodes, (n) => n.nodeName)).toEqual(['#text', '#text', '#cdata-section', 'b']);
    expect(light.childNodes[1].textContent).toBe('y');
    expect(light.childNodes[3].parentNode).toBe(light);
    expect(differences(dom, light).out).toEqual([]);
  });

  it('resolves namespaces: prefixes, default namespaces, undeclaring, the xml prefix', () => {
    const xml =
      '<p:root xmlns:p="urn:p" xmlns="urn:d" xml:lang="pt"><child/><p:other p:a="1"/>' +
      '<q:x xmlns:q="urn:q" q:attr="2"><y/></q:x><plain xmlns=""><z/></plain></p:root>';
    const [dom, light] = roots(xml);
    expect(light.namespaceURI).toBe('urn:p');
    expect(light.localName).toBe('root');
    expect(light.tagName).toBe('p:root');
    expect(childElements(light).map((e) => [e.tagName, e.localName, e.namespaceURI])).toEqual([
      ['child', 'child', 'urn:d'],
      ['p:other', 'other', 'urn:p'],
      ['q:x', 'x', 'urn:q'],
      ['plain', 'plain', null],
    ]);
    expect(child(light, 'x/y')?.namespaceURI).toBe('urn:d');
    expect(child(light, 'plain/z')?.namespaceURI).toBeNull();
    expect(light.getAttribute('xmlns:p')).toBe('urn:p');
    expect(light.getAttribute('xml:lang')).toBe('pt');
    expect(differences(dom, light).out).toEqual([]);
  });

  it('answers like xmldom for a missing attribute, and offers the DOM members the readers use', () => {
    const [dom, light] = roots(
      '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n<!-- c -->\n<a x="" y="1">t</a>\n<?pi?>\n',
    );
    expect(dom.getAttribute('missing')).toBe('');
    expect(light.getAttribute('missing')).toBe('');
    expect(light.hasAttribute('missing')).toBe(false);
    expect(light.hasAttribute('x')).toBe(true);
    expect(light.getAttribute('x')).toBe('');
    expect(light.parentNode).toBeNull();
    expect(light.firstChild?.nextSibling).toBeNull();
    expect(light.firstChild?.parentNode).toBe(light);
    expect(differences(dom, light).out).toEqual([]);
  });

  it('lets whitespace before the XML declaration through, as xmldom does (government answers have it)', () => {
    const parsed = parseXmlLight('\r\n  <?xml version="1.0" encoding="UTF-8"?>\n<a>1</a>');
    expect(parsed.ok && parsed.root.textContent).toBe('1');
  });

  it('works with the helpers of read.ts', () => {
    const xml =
      '\uFEFF<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"><infNFSe Id="NFS1"><nNFSe> 42 </nNFSe>' +
      '<xTribMun>Consultoria &amp; an&#225;lise</xTribMun><DPS><infDPS><serv><cServ><cTribMun><![CDATA[001]]>' +
      '</cTribMun></cServ></serv><item>1</item><item>2</item></infDPS></DPS></infNFSe>' +
      '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo/></Signature></NFSe>';
    const parsed = parseXmlLight(xml);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const inf = findDescendant(parsed.root, 'infNFSe');
    expect(inf?.getAttribute('Id')).toBe('NFS1');
    expect(text(inf, 'nNFSe')).toBe('42');
    expect(text(inf, 'DPS/infDPS/serv/cServ/cTribMun')).toBe('001');
    expect(text(inf, 'DPS/infDPS/missing')).toBeNull();
    expect(children(child(inf, 'DPS/infDPS'), 'item').map((e) => e.textContent)).toEqual(['1', '2']);
    expect(descendantText(parsed.root, 'xTribMun')).toBe('Consultoria & análise');
    expect(descendantText(parsed.root, 'SignedInfo')).toBeNull();
    expect(findDescendant(parsed.root, 'Signature')?.namespaceURI).toBe('http://www.w3.org/2000/09/xmldsig#');
    const sample = parseXmlLight(load(BIG_SAMPLE));
    if (!sample.ok) throw new Error(sample.message);
    expect(text(sample.root, 'infNFSe/nNFSe')).toBe('146');
    expect(descendantText(sample.root, 'xLocEmi')).toBe('Rio de Janeiro');
  });

  const refused: Array<[string, string]> = [
    ['unclosed element', '<a><b></b>'],
    ['unclosed start tag', '<a x="1"'],
    ['mismatched tags', '<a><b></a></b>'],
    ['end tag with a longer name', '<a><b></bc></a>'],
    ['text after the root', '<a/>x'],
    ['a second element', '<a/><b/>'],
    ['text before the root', 'x<a/>'],
    ['no root (empty)', ''],
    ['no root (whitespace, declaration, comment)', '<?xml version="1.0"?>\n<!-- c -->\n'],
    ['attribute value without quotes', '<a x=1/>'],
    ['attribute without =', '<a x/>'],
    ['attribute without = before a value', '<a x "1"/>'],
    ['attributes without whitespace between', '<a x="1"y="2"/>'],
    ['duplicate attribute', '<a x="1" x="2"/>'],
    ['< in an attribute value', '<a x="<"/>'],
    ['unknown entity in text', '<a>&bogus;</a>'],
    ['unknown entity in a value', '<a x="&nbsp;"/>'],
    ['reference to U+0000', '<a>&#0;</a>'],
    ['reference to a surrogate', '<a>&#xD800;</a>'],
    ['reference beyond U+10FFFF', '<a>&#x110000;</a>'],
    ['reference to U+FFFE', '<a>&#xFFFE;</a>'],
    ['reference without digits', '<a>&#x;</a>'],
    ['reference with an uppercase X', '<a>&#X41;</a>'],
    ['reference without ;', '<a>&#65</a>'],
    ['bare & in text', '<a>fish & chips</a>'],
    ['bare & in a value', '<a x="a&b"/>'],
    ['DOCTYPE', '<!DOCTYPE a><a/>'],
    ['DOCTYPE with an internal subset', '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'],
    ['unterminated comment', '<a><!-- x</a>'],
    ['-- inside a comment', '<a><!-- x -- y --></a>'],
    ['unterminated CDATA', '<a><![CDATA[x</a>'],
    ['unterminated processing instruction', '<a><?pi x</a>'],
    ['XML declaration not at the start', '<!-- c --><?xml version="1.0"?><a/>'],
    ['malformed XML declaration', '<?xml encoding="UTF-8"?><a/>'],
    ['empty element name', '<>x</>'],
    ['whitespace before the element name', '< a/>'],
    ['element name starting with a digit', '<1a/>'],
    ['attribute name starting with a digit', '<a 1x="1"/>'],
    ['element name with an empty local part', '<p:/>'],
    [']]> in text', '<a>]]></a>'],
    ['control character', '<a>\u0001</a>'],
    ['unpaired surrogate', '<a>\uD800</a>'],
    ['unbound element prefix', '<p:a/>'],
    ['unbound attribute prefix', '<a p:x="1"/>'],
  ];
  it.each(refused)('refuses: %s', (_label, xml) => {
    const parsed = parseXmlLight(xml);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(/^XML parse error: /);
  });

  it('prints rough timings (no assertion on them)', () => {
    const big = load(BIG_SAMPLE);
    const small = withoutSignatures(big);
    const perParse = (parse: typeof parseXml, xml: string) => {
      for (let i = 0; i < 200; i++) parse(xml); // warm-up: the JIT first
      const start = performance.now();
      for (let i = 0; i < 200; i++) parse(xml);
      return ((performance.now() - start) / 200).toFixed(3);
    };
    for (const [name, xml] of [
      [`${big.length} characters`, big],
      [`${small.length} characters (without signatures)`, small],
    ]) {
      console.log(`${name}: xmldom ${perParse(parseXml, xml)} ms, light ${perParse(parseXmlLight, xml)} ms per parse`);
    }
  });
});
