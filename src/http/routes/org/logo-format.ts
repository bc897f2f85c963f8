import { checkImage, type ImageCheck } from '../../../documents/image-structure.ts';

/** Image formats accepted as a DANFSe logo, recognised by their content (never by name or declared type). */
export type LogoFormat = { ext: 'png' | 'jpg' | 'webp'; mimeType: 'image/png' | 'image/jpeg' | 'image/webp' };

const FORMATS: Record<'png' | 'jpeg' | 'webp', LogoFormat> = {
  png: { ext: 'png', mimeType: 'image/png' },
  jpeg: { ext: 'jpg', mimeType: 'image/jpeg' },
  webp: { ext: 'webp', mimeType: 'image/webp' },
};

/** The logo decoded (structure walked, dimensions read), or why it is refused. */
export function decodeLogo(
  bytes: Buffer,
): { ok: true; format: LogoFormat; width: number; height: number } | Extract<ImageCheck, { ok: false }> {
  const checked = checkImage(bytes);
  if (!checked.ok) return checked;
  return { ok: true, format: FORMATS[checked.format], width: checked.width, height: checked.height };
}
