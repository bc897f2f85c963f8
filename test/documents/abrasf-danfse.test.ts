import { describe, expect, it } from 'vitest';
import { buildAbrasfDanfseModel, isAbrasfNfse } from '../../src/documents/danfse/abrasf-model.ts';
import { buildDanfseModel } from '../../src/documents/danfse/model.ts';
import { renderDanfse } from '../../src/documents/danfse/render.ts';
import { decodeQr, pdfText, renderPage } from '../documents-flow/support.ts';
import { hasTool } from '../support/tools.ts';

/**
 * The DANFSe-like rendering of municipal ABRASF NFS-e (spec 4.4: a provider without a published PDF gets a local
 * rendering): the 2.04 shape (declaration inside InfNfse, official namespace) and the 1.0 shape (Servico and
 * Tomador directly in InfNfse, the rate as a fraction, GINFES-like namespace).
 */

const V204 = `<?xml version="1.0" encoding="UTF-8"?>
<ConsultarNfseRpsResposta xmlns="http://www.abrasf.org.br/nfse.xsd"><CompNfse><Nfse versao="2.04"><InfNfse Id="nfse123">
<Numero>2026000123</Numero><CodigoVerificacao>AB12CD34</CodigoVerificacao><DataEmissao>2026-11-20T10:15:00</DataEmissao>
<ValoresNfse><BaseCalculo>1000.00</BaseCalculo><Aliquota>5.00</Aliquota><ValorIss>50.00</ValorIss><ValorLiquidoNfse>1000.00</ValorLiquidoNfse></ValoresNfse>
<PrestadorServico><IdentificacaoPrestador><CpfCnpj><Cnpj>11222333000181</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal></IdentificacaoPrestador>
<RazaoSocial>Prestadora Exemplo Ltda</RazaoSocial><Endereco><Endereco>Rua das Flores</Endereco><Numero>100</Numero><Bairro>Centro</Bairro><CodigoMunicipio>2704302</CodigoMunicipio><Uf>AL</Uf><Cep>57020000</Cep></Endereco>
<Contato><Telefone>8233334444</Telefone><Email>contato@prestadora.com.br</Email></Contato></PrestadorServico>
<OrgaoGerador><CodigoMunicipio>2704302</CodigoMunicipio><Uf>AL</Uf></OrgaoGerador>
<DeclaracaoPrestacaoServico><InfDeclaracaoPrestacaoServico Id="rps1">
<Rps><IdentificacaoRps><Numero>17</Numero><Serie>A1</Serie><Tipo>1</Tipo></IdentificacaoRps><DataEmissao>2026-11-20</DataEmissao><Status>1</Status></Rps>
<Competencia>2026-11-20</Competencia>
<Servico><Valores><ValorServicos>1000.00</ValorServicos><ValorIss>50.00</ValorIss><Aliquota>5.00</Aliquota></Valores>
<IssRetido>2</IssRetido><ItemListaServico>01.05</ItemListaServico><CodigoCnae>6201501</CodigoCnae><CodigoTributacaoMunicipio>010501</CodigoTributacaoMunicipio>
<Discriminacao>Licenciamento de software de gestão</Discriminacao><CodigoMunicipio>2704302</CodigoMunicipio><ExigibilidadeISS>1</ExigibilidadeISS><MunicipioIncidencia>2704302</MunicipioIncidencia></Servico>
<Prestador><CpfCnpj><Cnpj>11222333000181</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal></Prestador>
<TomadorServico><IdentificacaoTomador><CpfCnpj><Cnpj>45723174000110</Cnpj></CpfCnpj></IdentificacaoTomador><RazaoSocial>Tomadora Cliente SA</RazaoSocial>
<Endereco><Endereco>Avenida Brasil</Endereco><Numero>2000</Numero><Bairro>Jardim</Bairro><CodigoMunicipio>3550308</CodigoMunicipio><Uf>SP</Uf><Cep>01310100</Cep></Endereco></TomadorServico>
<OptanteSimplesNacional>1</OptanteSimplesNacional><IncentivoFiscal>2</IncentivoFiscal>
</InfDeclaracaoPrestacaoServico></DeclaracaoPrestacaoServico></InfNfse></Nfse></CompNfse></ConsultarNfseRpsResposta>`;

const V10 = `<?xml version="1.0" encoding="UTF-8"?>
<ns3:CompNfse xmlns:ns3="http://www.ginfes.com.br/servico_consultar_nfse_rps_resposta_v03.xsd" xmlns:ns4="http://www.ginfes.com.br/tipos_v03.xsd"><ns4:Nfse><ns4:InfNfse>
<ns4:Numero>88</ns4:Numero><ns4:CodigoVerificacao>XYZ987</ns4:CodigoVerificacao><ns4:DataEmissao>2026-11-21T09:00:00</ns4:DataEmissao>
<ns4:IdentificacaoRps><ns4:Numero>5</ns4:Numero><ns4:Serie>1</ns4:Serie><ns4:Tipo>1</ns4:Tipo></ns4:IdentificacaoRps><ns4:DataEmissaoRps>2026-11-21</ns4:DataEmissaoRps>
<ns4:NaturezaOperacao>1</ns4:NaturezaOperacao><ns4:OptanteSimplesNacional>2</ns4:OptanteSimplesNacional><ns4:IncentivadorCultural>2</ns4:IncentivadorCultural><ns4:Competencia>2026-11-01T00:00:00</ns4:Competencia>
<ns4:Servico><ns4:Valores><ns4:ValorServicos>200.00</ns4:ValorServicos><ns4:IssRetido>1</ns4:IssRetido><ns4:ValorIss>4.00</ns4:ValorIss><ns4:BaseCalculo>200.00</ns4:BaseCalculo><ns4:Aliquota>0.02</ns4:Aliquota><ns4:ValorLiquidoNfse>196.00</ns4:ValorLiquidoNfse></ns4:Valores>
<ns4:ItemListaServico>0107</ns4:ItemListaServico><ns4:CodigoCnae>6209100</ns4:CodigoCnae><ns4:Discriminacao>Suporte técnico mensal</ns4:Discriminacao><ns4:CodigoMunicipio>3518800</ns4:CodigoMunicipio></ns4:Servico>
<ns4:PrestadorServico><ns4:IdentificacaoPrestador><ns4:Cnpj>11222333000181</ns4:Cnpj><ns4:InscricaoMunicipal>99887</ns4:InscricaoMunicipal></ns4:IdentificacaoPrestador><ns4:RazaoSocial>Prestadora Guarulhos Ltda</ns4:RazaoSocial></ns4:PrestadorServico>
<ns4:TomadorServico><ns4:IdentificacaoTomador><ns4:CpfCnpj><ns4:Cpf>52998224725</ns4:Cpf></ns4:CpfCnpj></ns4:IdentificacaoTomador><ns4:RazaoSocial>Maria da Silva</ns4:RazaoSocial></ns4:TomadorServico>
<ns4:OrgaoGerador><ns4:CodigoMunicipio>3518800</ns4:CodigoMunicipio><ns4:Uf>SP</ns4:Uf></ns4:OrgaoGerador>
</ns4:InfNfse></ns4:Nfse></ns3:CompNfse>`;

describe('the DANFSe-like model of an ABRASF NFS-e', () => {
  it('reads the 2.04 shape: provider, taker, service, ISS and totals', () => {
    expect(isAbrasfNfse(V204)).toBe(true);
    const result = buildDanfseModel(V204);
    if (!result.ok) throw new Error(result.message);
    const m = result.model;
    expect(m.numero).toBe('2026000123');
    expect(m.chaveAcesso).toContain('AB12CD34');
    expect(m.municipioEmissor).toBe('Maceió - AL');
    expect(m.prestador.documento).toBe('11.222.333/0001-81');
    expect(m.prestador.nome).toBe('Prestadora Exemplo Ltda');
    expect(m.prestador.simplesNacional).toBe('Optante');
    expect(m.tomador?.nome).toBe('Tomadora Cliente SA');
    expect(m.tomador?.municipio).toBe('São Paulo - SP');
    expect(m.servico.descricao).toBe('Licenciamento de software de gestão');
    expect(m.servico.codigoTributacaoMunicipal).toBe('Item 01.05 / 010501');
    expect(m.issqn?.aliquota).toBe('5,00%');
    expect(m.issqn?.retencao).toBe('Não retido');
    expect(m.totais.valorServico).toBe('R$ 1.000,00');
    expect(m.dpsNumero).toBe('17');
    expect(m.informacoesComplementares).toContain('CNAE: 6201501');
  });

  it('reads the 1.0 shape, with the rate as a fraction and the ISS withheld', () => {
    const result = buildAbrasfDanfseModel(V10, { consultationUrl: 'https://example.gov.br/nfse/88' });
    if (!result.ok) throw new Error(result.message);
    const m = result.model;
    expect(m.numero).toBe('88');
    expect(m.prestador.nome).toBe('Prestadora Guarulhos Ltda');
    expect(m.prestador.simplesNacional).toBe('Não optante');
    expect(m.tomador?.documento).toBe('529.982.247-25');
    expect(m.issqn?.aliquota).toBe('2,00%');
    expect(m.issqn?.retencao).toBe('Retido pelo tomador');
    expect(m.issqn?.tributacao).toBe('Tributação no município');
    expect(m.totais.totalRetencoes).toBe('R$ 4,00');
    expect(m.totais.valorLiquido).toBe('R$ 196,00');
    expect(m.qrCodeUrl).toBe('https://example.gov.br/nfse/88');
  });

  it('refuses, as values, an XML that is not an NFS-e or has no number', () => {
    expect(buildAbrasfDanfseModel('<x/>').ok).toBe(false);
    const noNumber = buildAbrasfDanfseModel(V204.replace('<Numero>2026000123</Numero>', ''));
    expect(noNumber.ok).toBe(false);
  });

  it.skipIf(!hasTool('pdftotext'))('renders a one-page PDF whose text carries the note', async () => {
    const rendered = await renderDanfse({ nfseXml: V204, template: 'padrao', logo: null, cancelled: null });
    if (!rendered.ok) throw new Error(rendered.message);
    const text = pdfText(rendered.pdf);
    expect(text).toContain('2026000123');
    expect(text).toContain('Prestadora Exemplo Ltda');
    expect(text).toContain('Licenciamento de software');
    if (hasTool('zbarimg') && hasTool('pdftoppm')) {
      expect(decodeQr(renderPage(rendered.pdf))).toContain('AB12CD34');
    }
  });
});
