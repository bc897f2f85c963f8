import { describe, expect, it } from 'vitest';
import {
  child,
  descendantText,
  findDescendant,
  outerXml,
  parseXml,
  parseXmlDocument,
  text,
  withoutSignatures,
} from '../../src/xml/read.ts';

const NFSE =
  '\uFEFF<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"><infNFSe Id="NFS1"><nNFSe> 42 </nNFSe>' +
  '<xTribMun>Consultoria &amp; an&#225;lise</xTribMun><DPS><infDPS><serv><cServ><cTribMun><![CDATA[001]]></cTribMun>' +
  '</cServ></serv></infDPS></DPS></infNFSe>' +
  '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo/></Signature></NFSe>';

describe('xml/read.ts (the reader kit)', () => {
  it('reads by local name, whatever the namespace, with entities, CDATA and a BOM', () => {
    const parsed = parseXml(withoutSignatures(NFSE));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const inf = findDescendant(parsed.root, 'infNFSe');
    expect(inf?.getAttribute('Id')).toBe('NFS1');
    expect(text(inf, 'nNFSe')).toBe('42');
    expect(text(inf, 'DPS/infDPS/serv/cServ/cTribMun')).toBe('001');
    expect(descendantText(parsed.root, 'xTribMun')).toBe('Consultoria & análise');
    expect(descendantText(parsed.root, 'cTribMun')).toBe('001');
    expect(descendantText(parsed.root, 'Signature')).toBeNull();
    expect(descendantText(null, 'nNFSe')).toBeNull();
    expect(outerXml(child(inf, 'nNFSe')!)).toBe('<nNFSe xmlns="http://www.sped.fazenda.gov.br/nfse"> 42 </nNFSe>');
  });

  it('parseXml refuses any parser message; parseXmlDocument leaves the choice to the caller', () => {
    for (const bad of ['<a><b></a>', '<a>', 'not xml', '', '<a>&bogus;</a>', '<a x="1" x="2"/>']) {
      const parsed = parseXml(bad);
      expect(parsed.ok, bad).toBe(false);
      if (!parsed.ok) expect(parsed.message).toMatch(/^XML parse error: /);
    }
    const levels: string[] = [];
    const doc = parseXmlDocument('<a><b>x</a>', (level) => levels.push(level));
    expect(levels.length).toBeGreaterThan(0);
    expect(doc.documentElement?.localName).toBe('a');
    expect(() =>
      parseXmlDocument('<a>&bogus;</a>', (level, message) => {
        if (level !== 'warning') throw new Error(message);
      }),
    ).toThrow();
  });
});
