import type { AuthKind, Credential, FamilyId, Transport } from './families.ts';

/**
 * What each ACBr provider needs on the wire: transport, XML signature, client certificate in the TLS
 * handshake and credentials. Facts read from ACBr's provider units (`*.Provider.pas`: web-service class,
 * `UseCertificateHTTP`, `Autenticacao.Requer*`, `ConfigAssinar`) as summarised in the routing brief
 * (shared/briefs/routing.md §4); they describe what ACBr sends, which is strong evidence, not a server
 * specification. Providers absent here take their family's defaults (`FAMILY_DEFAULT_TRAITS`).
 *
 * The import script (scripts/import-routing.ts) copies these into the generated registry, where they are
 * validated with the rest of each municipality's parameters.
 */
export interface ProviderTraits {
  transport: Transport;
  xmlSignature: boolean;
  /** presents the A1 certificate in the TLS handshake */
  clientCertificate: boolean;
  /** credentials besides the certificate */
  credentials: Credential[];
  /** how the credentials travel (defaults: mtls when a client certificate is presented, else signature) */
  auth?: AuthKind;
}

const cert = (transport: Transport, clientCertificate = true, xmlSignature = true): ProviderTraits => ({
  transport,
  xmlSignature,
  clientCertificate,
  credentials: [],
});
const USER_PASSWORD: Credential[] = ['municipalUser', 'municipalPassword'];

export const PROVIDER_TRAITS: Record<string, ProviderTraits> = {
  PadraoNacional: cert('rest-json'),
  Fiorilli: { ...cert('soap11'), credentials: USER_PASSWORD, auth: 'body-credentials' },
  Betha: cert('soap11'),
  IPM: {
    transport: 'multipart',
    xmlSignature: false,
    clientCertificate: false,
    credentials: ['basicAuthUsuario', 'basicAuthSenha'],
    auth: 'basic',
  },
  Pronim: cert('rest-json'),
  MegaSoft: cert('soap11'),
  EL: cert('soap11'),
  Futurize: cert('soap11', false),
  EloTech: { ...cert('soap11', false, false), credentials: USER_PASSWORD, auth: 'body-credentials' },
  WebISS: cert('soap11'),
  Tributus: { ...cert('soap11'), credentials: ['authorizationKey'], auth: 'body-credentials' },
  Sintese: cert('soap11'),
  Fisco: cert('soap12', true, false),
  // Centi.Provider.pas (Rest2): `{"xml", "usuario", "senha"}` JSON; ACBr refuses to send without WSUser/WSSenha
  Centi: { ...cert('rest-json'), credentials: USER_PASSWORD, auth: 'body-credentials' },
  Elmar: { ...cert('rest-json', true, false), credentials: ['accessToken'], auth: 'bearer' },
  Saatri: { ...cert('soap11', false), credentials: USER_PASSWORD, auth: 'body-credentials' },
  Tecnos: cert('soap11'),
  Tinus: cert('soap11'),
  SpeedGov: cert('soap11', false),
  ABase: { ...cert('rest-json'), credentials: ['accessToken'], auth: 'bearer' },
  Coplan: cert('soap11'),
  Aspec: { ...cert('rest-json', false, false), credentials: ['authorizationKey'], auth: 'header-token' },
  Equiplano: cert('soap11'),
  PublicSoft: { ...cert('rest-json'), credentials: [...USER_PASSWORD, 'accessToken'], auth: 'bearer' },
  Giss: cert('soap11'),
  GovDigital: cert('soap11'),
  NFSeBrasil: { ...cert('soap11', false, false), credentials: ['accessToken'], auth: 'body-credentials' },
  SimplISS: cert('rest-json'),
  // a Sefin-clone REST API like SimplISS (briefs/providers-own.md §4)
  RLZ: cert('rest-json'),
  Citta: cert('rest-json'),
  ISSNet: cert('soap11'),
  // Agili: the digital key and the city hall's CNPJ (UnidadeGestora) in every message
  Agili: {
    ...cert('http-xml', false, false),
    credentials: ['accessToken', 'cnpjPrefeitura'],
    auth: 'body-credentials',
  },
  ISSIntel: cert('soap11'),
  Publica: cert('soap11', false),
  Ginfes: cert('soap11'),
  SH3: cert('soap11'),
  VersaTecnologia: cert('soap11', false),
  Conam: { ...cert('soap11', false, false), credentials: USER_PASSWORD, auth: 'body-credentials' },
  Digifred: cert('soap11'),
  Adm: {
    ...cert('soap11'),
    credentials: [...USER_PASSWORD, 'accessToken', 'authorizationKey'],
    auth: 'body-credentials',
  },
  SigISSWeb: { ...cert('rest-json', false, false), credentials: USER_PASSWORD, auth: 'bearer' },
  ISSSaoPaulo: cert('soap11'),
  DSF: cert('soap11'),
  SilTecnologia: cert('soap11'),
  ISSSalvador: cert('soap11'),
  ISSFortaleza: cert('soap11'),
  ISSDSF: cert('soap11'),
  ModernizacaoPublica: { ...cert('rest-json'), credentials: ['basicAuthUsuario', 'basicAuthSenha'], auth: 'basic' },
  Infisc: cert('rest-json'),
  Giap: { ...cert('http-xml', false, false), credentials: ['authorizationKey'], auth: 'header-token' },
  ISSCampinas: cert('soap11'),
  Tiplan: cert('rest-json'),
  fintelISS: cert('soap11'),
  // eGoverneISS.Provider.pas: no certificate, the access key (WSChaveAcesso) as ChaveAutenticacao in the message
  eGoverneISS: { ...cert('soap11', false, false), credentials: ['accessToken'], auth: 'body-credentials' },
  // Bauhaus.Provider.pas: JSON over REST, `Authorization: <WSChaveAutoriz>`, no certificate
  Bauhaus: { ...cert('rest-json', false, false), credentials: ['authorizationKey'], auth: 'header-token' },
  // ISSLegal (Rede Municipal): unsigned ABRASF 2.03, the authorization key in the Authorization header over mTLS
  ISSLegal: { ...cert('soap11', true, false), credentials: ['authorizationKey'], auth: 'header-token' },
};

/**
 * Traits of a provider in one family when its other family differs on the wire (keyed `<family>:<provider>`),
 * applied when the registry is read: E&L's legacy own layout (RpsServiceService) opens a session with the
 * web-service password and signs nothing, while its ABRASF 2.04 cities keep the certificate (`EL` above).
 */
export const FAMILY_PROVIDER_TRAITS: Record<string, ProviderTraits> = {
  'own-layout:EL': { ...cert('soap11', false, false), credentials: ['municipalPassword'], auth: 'body-credentials' },
};

/** The credentials a route needs as stored in the registry: the certificate where it signs or presents it. */
export function credentialsOf(traits: ProviderTraits): Credential[] {
  return [
    ...(traits.xmlSignature || traits.clientCertificate ? (['certificate'] as const) : []),
    ...traits.credentials,
  ];
}

/** Traits of a provider absent from the table: the usual shape of its family. */
export const FAMILY_DEFAULT_TRAITS: Record<FamilyId, ProviderTraits> = {
  national: cert('rest-json'),
  'dps-provider': cert('soap11'),
  'abrasf-v1': cert('soap11'),
  'abrasf-v2': cert('soap11'),
  ginfes: cert('soap11'),
  'sao-paulo': cert('soap11'),
  ipm: PROVIDER_TRAITS.IPM!,
  'own-layout': cert('soap11'),
};

/** The auth kind of a provider: explicit, else mtls when the certificate is presented, else signature. */
export function authKindOf(traits: ProviderTraits): AuthKind {
  return traits.auth ?? (traits.clientCertificate ? 'mtls' : 'signature');
}
