import PDFDocument from 'pdfkit';

/**
 * The IPM sandbox's "public DANFSE page": ACBr's `ProLinkURL` for IPM is
 * `http://sync.nfs-e.net/datacenter/include/nfw/nfw_imp_notas.php?codauten=<código>` (no authentication). Here
 * `GET /municipal/ipm/{ambiente}/?codauten=<código>` answers a real, small PDF of the note (Helvetica, one page) so
 * the service's download path (spec 4.4: 200 application/pdf inline) is exercised end to end; an unknown code answers
 * an HTML page (404), as a portal would, never a PDF.
 */
export interface PrintableNote {
  numero: string;
  serie: string;
  codigo: string;
  user: string;
  issuedAt: Date;
  cancelled: boolean;
}

export function renderNotePdf(note: PrintableNote): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: 48, info: { Title: `NFS-e ${note.numero}`, Producer: 'sandbox' } });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.font('Helvetica-Bold').fontSize(14).text('NOTA FISCAL DE SERVIÇOS ELETRÔNICA - NFS-e (sandbox IPM)');
  doc.moveDown().font('Helvetica').fontSize(11);
  doc.text(`Número: ${note.numero}   Série: ${note.serie}`);
  doc.text(`Código de autenticidade: ${note.codigo}`);
  doc.text(`Prestador (CPF/CNPJ): ${note.user}`);
  doc.text(`Emissão: ${note.issuedAt.toISOString()}`);
  if (note.cancelled) doc.moveDown().font('Helvetica-Bold').fontSize(18).text('CANCELADA');
  doc.end();
  return done;
}

export const notFoundPage = (code: string) => ({
  status: 404,
  body: `<html><body><p>Nota fiscal não encontrada para o código ${code.replace(/[^\w-]/g, '')}.</p></body></html>`,
  headers: { 'content-type': 'text/html; charset=ISO-8859-1' },
});
