// Small files the client and CLI tests upload: bytes of a real type, built here so that
// each test states what it sends.
import { createHash } from 'node:crypto';

/** A minimal PDF: the `%PDF-1.4` header, one object, a trailer, `%%EOF`. */
export const PDF_BYTES = Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1');

/** A CSV of three lines (no signature: the server takes its type as declared). */
export const CSV_BYTES = Buffer.from('id,sku,qty\n1,A-1,2\n2,B-7,5\n', 'utf8');

/** A 1×1 PNG's signature and IHDR chunk, then IEND: sniffed as image/png. */
export const PNG_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0, 0, 0, 13]),
  Buffer.from('IHDR', 'latin1'),
  Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]),
  Buffer.from([0x1f, 0x15, 0xc4, 0x89]),
  Buffer.from([0, 0, 0, 0]),
  Buffer.from('IEND', 'latin1'),
  Buffer.from([0xae, 0x42, 0x60, 0x82]),
]);

/** SHA-256 of `bytes`, lowercase hex (as the API reports it). */
export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
