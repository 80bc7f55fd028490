import { strToU8, zipSync } from "fflate";

/**
 * Small hostile files for the decompression and spreadsheet bounds. The
 * DEFLATE bomb is written bit by bit (one literal, then length-258 copies of
 * it at distance 1: 13 bits per 258 bytes), so a 70 MB payload is ~450 KB and
 * takes milliseconds to make; a real compressor would take seconds.
 */

/** Raw DEFLATE (fixed Huffman) of `bytes` copies of `fill`. */
export function deflateBomb(bytes: number, fill = 0x20): Uint8Array {
  const repeats = Math.ceil((bytes - 1) / 258);
  const out = new Uint8Array(Math.ceil((3 + 8 + repeats * 13 + 7) / 8) + 1);
  let bit = 0;
  const put = (value: number, length: number) => {
    // Huffman codes go most significant bit first.
    for (let i = length - 1; i >= 0; i--, bit++) if ((value >> i) & 1) out[bit >> 3] |= 1 << (bit & 7);
  };
  out[0] = 0b011; // BFINAL = 1, BTYPE = 01 (fixed Huffman), least significant bit first
  bit = 3;
  put(0x30 + fill, 8); // the literal (codes 0-143 are 0x30 + value, 8 bits)
  for (let i = 0; i < repeats; i++) {
    put(0b11000101, 8); // length 258 (symbol 285)
    put(0, 5); // distance 1 (code 0)
  }
  put(0, 7); // end of block (symbol 256)
  return out.subarray(0, Math.ceil(bit / 8));
}

/** A ZIP archive written by hand: `stored` entries as they are, `bombs` as DEFLATE data that lies about its size. */
export function handZip(entries: Array<{ name: string; data: Uint8Array; deflated?: boolean; declaredSize?: number }>): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  const le = (n: number, size: 2 | 4) => Array.from({ length: size }, (_, i) => (n >>> (8 * i)) & 0xff);
  for (const e of entries) {
    const name = strToU8(e.name);
    const method = e.deflated ? 8 : 0;
    const declared = e.declaredSize ?? e.data.length;
    const common = [...le(20, 2), ...le(0, 2), ...le(method, 2), ...le(0, 2), ...le(0, 2), ...le(0, 4), ...le(e.data.length, 4), ...le(declared, 4), ...le(name.length, 2), ...le(0, 2)];
    const local = new Uint8Array([...le(0x04034b50, 4), ...common, ...name]);
    central.push(new Uint8Array([...le(0x02014b50, 4), ...le(20, 2), ...common, ...le(0, 2), ...le(0, 2), ...le(0, 2), ...le(0, 4), ...le(offset, 4), ...name]));
    chunks.push(local, e.data);
    offset += local.length + e.data.length;
  }
  const cdSize = central.reduce((n, c) => n + c.length, 0);
  const eocd = new Uint8Array([...le(0x06054b50, 4), ...le(0, 2), ...le(0, 2), ...le(entries.length, 2), ...le(entries.length, 2), ...le(cdSize, 4), ...le(offset, 4), ...le(0, 2)]);
  const all = [...chunks, ...central, eocd];
  const out = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of all) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

const xml = (s: string) => strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${s}`);
const WORKBOOK_NS = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`;

/** Column letters of a 1-based column number (1 -> A, 16,384 -> XFD). */
export function columnLetters(n: number): string {
  let s = "";
  for (; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/** A workbook of the given sheets (name and worksheet rows XML), each listed `sheetEntries` times (all pointing at its one part). */
export function workbook(sheets: Array<{ name: string; rows: string }>, opts: { sheetEntries?: number } = {}): Uint8Array {
  const listed: string[] = [];
  const rels: string[] = [];
  const parts: Record<string, Uint8Array> = {};
  sheets.forEach((s, i) => {
    rels.push(`<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`);
    parts[`xl/worksheets/sheet${i + 1}.xml`] = xml(`<worksheet ${WORKBOOK_NS}><sheetData>${s.rows}</sheetData></worksheet>`);
    for (let k = 0; k < (opts.sheetEntries ?? 1); k++) listed.push(`<sheet name="${s.name}${k ? ` (${k + 1})` : ""}" sheetId="${listed.length + 1}" r:id="rId${i + 1}"/>`);
  });
  return zipSync({
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "xl/workbook.xml": xml(`<workbook ${WORKBOOK_NS}><sheets>${listed.join("")}</sheets></workbook>`),
    "xl/_rels/workbook.xml.rels": xml(`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${rels.join("")}</Relationships>`),
    ...parts,
  });
}

/** Rows of inline-string cells: a header row and `n` data rows of two columns. */
export function inlineRows(n: number): string {
  const cell = (ref: string, v: string) => `<c r="${ref}" t="inlineStr"><is><t>${v}</t></is></c>`;
  let rows = `<row r="1">${cell("A1", "City")}${cell("B1", "Code")}</row>`;
  for (let i = 2; i <= n + 1; i++) rows += `<row r="${i}">${cell(`A${i}`, `City ${i}`)}<c r="B${i}"><v>${i}</v></c></row>`;
  return rows;
}

/** An Office file (DOCX, XLSX or PPTX shape) whose main XML part inflates to `bytes` while declaring 1 KB. */
export function officeBomb(kind: "docx" | "xlsx" | "pptx", bytes: number): Uint8Array {
  const main = { docx: "word/document.xml", xlsx: "xl/worksheets/sheet1.xml", pptx: "ppt/slides/slide1.xml" }[kind];
  const extra: Record<string, string> = {
    docx: `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
    xlsx: `<workbook ${WORKBOOK_NS}><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    pptx: `<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
  };
  const extraName = { docx: "_rels/.rels", xlsx: "xl/workbook.xml", pptx: "ppt/presentation.xml" }[kind];
  const rels = {
    docx: null,
    xlsx: ["xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`],
    pptx: ["ppt/_rels/presentation.xml.rels", `<Relationships><Relationship Id="rId1" Target="slides/slide1.xml"/></Relationships>`],
  }[kind];
  return handZip([
    { name: "[Content_Types].xml", data: xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`) },
    { name: extraName, data: xml(extra[kind]) },
    ...(rels ? [{ name: rels[0], data: xml(rels[1]) }] : []),
    { name: main, data: deflateBomb(bytes), deflated: true, declaredSize: 1024 },
  ]);
}

/** A one-page PDF whose content stream (zlib, FlateDecode) inflates to `bytes`. */
export function pdfBomb(bytes: number): Uint8Array {
  const data = new Uint8Array([0x78, 0x01, ...deflateBomb(bytes, 0x20)]);
  const head = strToU8(
    "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n" +
      "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >> endobj\n" +
      `4 0 obj << /Length ${data.length} /Filter /FlateDecode >>\nstream\n`,
  );
  const tail = strToU8("\nendstream\nendobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");
  const out = new Uint8Array(head.length + data.length + tail.length);
  out.set(head);
  out.set(data, head.length);
  out.set(tail, head.length + data.length);
  return out;
}
