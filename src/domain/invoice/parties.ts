import { findCountry } from '../countries.ts';
import { findMunicipalitiesByName, findMunicipality, type Municipality } from '../municipalities.ts';
import { normalizeCnpj, normalizeCpf } from '../tax-ids.ts';
import { type Warning, warning } from '../warnings.ts';
import { clean } from './common.ts';
import type { Checked, FieldError, NormalizedAddress, NormalizedParty, PartyId } from './normalized.ts';
import type { EnderecoInput } from './request-schema.ts';

/** Parties (taker, recipient) and postal addresses: identification, Brazilian municipality resolution, abroad. */

const UFS = new Set('AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO'.split(' '));
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Defaults of an address abroad for the data the national layout requires (TCEnderExt / TCEndereco) and spec 2.7
 * has no field for: xEstProvReg (extension `estadoProvincia`) is the `uf` when it is not `EX`, else the city;
 * xBairro is {@link FOREIGN_DISTRICT_DEFAULT}. Each default is told back (FOREIGN_ADDRESS_DEFAULT_APPLIED).
 */
export const FOREIGN_DISTRICT_DEFAULT = 'Não informado';

export function normalizeAddress(raw: EnderecoInput | undefined, path: string): Checked<NormalizedAddress | null> {
  const errors: FieldError[] = [];
  const warnings: Warning[] = [];
  if (!raw) return { value: null, errors, warnings };
  const pais = (clean(raw.pais) ?? 'BR').toUpperCase();
  let uf = clean(raw.uf)?.toUpperCase() ?? null;
  if (!findCountry(pais)) errors.push({ field: `${path}.pais`, message: `unknown ISO2 country code '${pais}'` });
  const base = {
    pais,
    logradouro: clean(raw.logradouro),
    numero: clean(raw.numero),
    complemento: clean(raw.complemento),
    bairro: clean(raw.bairro),
  };
  if (pais !== 'BR') {
    const cep = clean(raw.cep);
    if (cep && cep.length > 11) errors.push({ field: `${path}.cep`, message: 'postal code longer than 11 characters' });
    const cidade = clean(raw.cidade);
    let estado = clean(raw.estadoProvincia) ?? (uf && uf !== 'EX' ? clean(raw.uf) : null);
    if (!estado && cidade) {
      estado = cidade.slice(0, 60);
      warnings.push(
        warning(
          'FOREIGN_ADDRESS_DEFAULT_APPLIED',
          `${path}.estadoProvincia`,
          `state/province/region of the address abroad (xEstProvReg) not sent: the city '${estado}' was declared`,
        ),
      );
    }
    let bairro = base.bairro;
    if (!bairro && base.logradouro) {
      bairro = FOREIGN_DISTRICT_DEFAULT;
      warnings.push(
        warning(
          'FOREIGN_ADDRESS_DEFAULT_APPLIED',
          `${path}.bairro`,
          `district of the address abroad (xBairro) not sent: '${FOREIGN_DISTRICT_DEFAULT}' was declared`,
        ),
      );
    }
    return {
      value: {
        ...base,
        bairro,
        nacional: false,
        cidade,
        codigoMunicipio: null,
        uf: null,
        estadoProvincia: estado,
        cep,
      },
      errors,
      warnings,
    };
  }
  if (uf === 'EX') {
    errors.push({ field: `${path}.pais`, message: "uf 'EX' (abroad) needs the ISO2 country of the address in pais" });
    uf = null;
  } else if (uf && !UFS.has(uf)) {
    errors.push({ field: `${path}.uf`, message: `unknown state abbreviation '${uf}'` });
    uf = null;
  }
  const cepRaw = clean(raw.cep);
  let cep: string | null = null;
  if (cepRaw) {
    if (/^\d{8}$/.test(cepRaw)) cep = cepRaw;
    else errors.push({ field: `${path}.cep`, message: 'CEP must have 8 digits, without mask' });
  }
  let municipality: Municipality | undefined;
  const code = clean(raw.codigoMunicipio);
  const cidade = clean(raw.cidade);
  if (code) {
    municipality = /^\d{7}$/.test(code) ? findMunicipality(code) : undefined;
    if (!municipality)
      errors.push({ field: `${path}.codigoMunicipio`, message: `unknown IBGE municipality '${code}'` });
    else if (uf && municipality.uf !== uf) {
      errors.push({ field: `${path}.uf`, message: `municipality ${code} is in ${municipality.uf}, not ${uf}` });
    }
  } else if (cidade) {
    const found = findMunicipalitiesByName(cidade, uf);
    if (found.length === 1) municipality = found[0];
    else if (found.length === 0) {
      errors.push({
        field: `${path}.cidade`,
        message: uf ? `no municipality named '${cidade}' in ${uf}` : `no municipality named '${cidade}'`,
      });
    } else {
      errors.push({
        field: `${path}.uf`,
        message: `'${cidade}' exists in ${found.map((m) => m.uf).join(', ')}: send the state abbreviation`,
      });
    }
  }
  return {
    value: {
      ...base,
      nacional: true,
      cidade: municipality?.name ?? cidade,
      codigoMunicipio: municipality?.code ?? null,
      uf: municipality?.uf ?? uf,
      estadoProvincia: null,
      cep,
    },
    errors,
    warnings,
  };
}

export type PartyInput = {
  cnpj?: string;
  cpf?: string;
  nif?: string;
  motivoNaoNif?: 1 | 2;
  nome: string;
  inscricaoMunicipal?: string;
  email?: string;
  telefone?: string;
  endereco?: EnderecoInput;
};

function partyId(raw: PartyInput, path: string): Checked<PartyId | null> {
  const errors: FieldError[] = [];
  const cnpjRaw = clean(raw.cnpj);
  const cpfRaw = clean(raw.cpf);
  const nif = clean(raw.nif);
  const given = [cnpjRaw && 'cnpj', cpfRaw && 'cpf', nif && 'nif'].filter(Boolean) as string[];
  if (raw.motivoNaoNif !== undefined && given.length === 0) given.push('motivoNaoNif');
  else if (raw.motivoNaoNif !== undefined) {
    errors.push({ field: `${path}.motivoNaoNif`, message: 'only for a party abroad without cnpj, cpf or nif' });
  }
  if (given.length === 0) {
    errors.push({ field: path, message: 'one identification is required: cnpj, cpf, or nif (abroad)' });
  } else if (given.length > 1) {
    errors.push({ field: `${path}.${given[1]}`, message: `only one identification is allowed; ${given[0]} was given` });
  }
  let id: PartyId | null = null;
  if (cnpjRaw) {
    const cnpj = /^\d{14}$/.test(cnpjRaw) ? normalizeCnpj(cnpjRaw) : null;
    if (!cnpj)
      errors.push({ field: `${path}.cnpj`, message: 'invalid CNPJ: 14 digits without mask, valid check digits' });
    else id = { kind: 'cnpj', cnpj };
  } else if (cpfRaw) {
    const cpf = /^\d{11}$/.test(cpfRaw) ? normalizeCpf(cpfRaw) : null;
    if (!cpf) errors.push({ field: `${path}.cpf`, message: 'invalid CPF: 11 digits without mask, valid check digits' });
    else id = { kind: 'cpf', cpf };
  } else if (nif) {
    if (nif.length > 40) errors.push({ field: `${path}.nif`, message: 'NIF longer than 40 characters' });
    else id = { kind: 'nif', nif };
  } else if (raw.motivoNaoNif === 1 || raw.motivoNaoNif === 2) {
    id = { kind: 'semNif', motivo: raw.motivoNaoNif };
  } else if (raw.motivoNaoNif !== undefined) {
    errors.push({ field: `${path}.motivoNaoNif`, message: 'must be 1 (exempt) or 2 (not required)' });
  }
  return { value: id, errors, warnings: [] };
}

/** A taker or recipient: one identification, name, contacts, address; abroad when identified by NIF. */
export function normalizeParty(raw: PartyInput, path: string): Checked<NormalizedParty | null> {
  const errors: FieldError[] = [];
  const id = partyId(raw, path);
  errors.push(...id.errors);
  const nome = clean(raw.nome);
  if (!nome) errors.push({ field: `${path}.nome`, message: 'required' });
  const email = clean(raw.email);
  if (email && (!EMAIL.test(email) || email.length > 80)) {
    errors.push({ field: `${path}.email`, message: 'invalid e-mail address (max 80 characters)' });
  }
  const telefone = clean(raw.telefone);
  if (telefone && !/^\d{6,20}$/.test(telefone)) {
    errors.push({ field: `${path}.telefone`, message: 'digits only, 6 to 20 (area code + number)' });
  }
  const im = clean(raw.inscricaoMunicipal);
  if (im && im.length > 15) errors.push({ field: `${path}.inscricaoMunicipal`, message: 'max 15 characters' });
  const address = normalizeAddress(raw.endereco, `${path}.endereco`);
  errors.push(...address.errors);
  const endereco = address.value;
  const abroad = endereco ? !endereco.nacional : false;
  const kind = id.value?.kind;
  if ((kind === 'nif' || kind === 'semNif') && !abroad) {
    errors.push({
      field: `${path}.endereco.pais`,
      message: 'a party identified by NIF (or without NIF) is abroad: send its address with a country other than BR',
    });
  }
  if (errors.length > 0 || !id.value || !nome) return { value: null, errors, warnings: address.warnings };
  return {
    value: {
      id: id.value,
      nome,
      inscricaoMunicipal: im,
      email,
      telefone,
      endereco,
      estrangeiro: abroad || kind === 'nif' || kind === 'semNif',
    },
    errors,
    warnings: address.warnings,
  };
}
