import { Document, HeadingLevel, Packer, Paragraph, TextRun } from "docx";
import { strToU8, zipSync } from "fflate";
import { PDFDocument, rgb, StandardFonts } from "pdf-lib";

/** Real files made by the tests themselves (pdf-lib, docx, hand-written OOXML). */

/** A 3-page PDF: headings in 20 pt on pages 1 and 2, body text in 11 pt. */
export async function multiPagePdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const pages: { heading?: string; lines: string[] }[] = [
    { heading: "Introduction", lines: ["The aurora borealis is caused by charged particles.", "They collide with gases in the upper atmosphere."] },
    { heading: "Methods", lines: ["We photographed the sky over Tromso every night.", "Exposure times ranged from two to eight seconds."] },
    { lines: ["Appendix: the camera was a full-frame mirrorless body.", "Lenses were wide-angle primes."] },
  ];
  for (const p of pages) {
    const page = pdf.addPage([595, 842]);
    let y = 780;
    if (p.heading) {
      page.drawText(p.heading, { x: 50, y, size: 20, font: bold });
      y -= 40;
    }
    for (const line of p.lines) {
      page.drawText(line, { x: 50, y, size: 11, font });
      y -= 16;
    }
  }
  return pdf.save();
}

/** A PDF with only a drawn rectangle: no text layer (like a scan). */
export async function imageOnlyPdf(): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([300, 300]);
  page.drawRectangle({ x: 20, y: 20, width: 200, height: 100, color: rgb(0.2, 0.4, 0.8) });
  return pdf.save();
}

/** A DOCX with Heading 1 / Heading 2 styles. */
export async function docxWithHeadings(): Promise<Uint8Array> {
  const doc = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: "Employee Handbook", heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun("Welcome to the company. Read this handbook in your first week.")] }),
          new Paragraph({ text: "Vacation", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ children: [new TextRun("Employees receive twenty-five days of paid vacation per year.")] }),
          new Paragraph({ text: "Expenses", heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ children: [new TextRun("Submit receipts within thirty days through the finance portal.")] }),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toArrayBuffer(doc));
}

/** An article page wrapped in navigation, header, sidebar and footer chrome. */
export const ARTICLE_HTML = `<!DOCTYPE html>
<html><head><title>How Bees Make Honey | Nature Blog</title></head>
<body>
  <header><div class="logo">Nature Blog</div></header>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/pricing">Pricing plans</a></li><li><a href="/login">Sign in</a></li></ul></nav>
  <aside class="sidebar">Subscribe to our newsletter for weekly gardening deals!</aside>
  <main><article>
    <h1>How Bees Make Honey</h1>
    <p>Honey bees collect nectar from flowers and store it in a special stomach called the crop. Back at the hive, worker bees pass the nectar mouth to mouth, adding enzymes that break complex sugars into simple ones.</p>
    <h2>Evaporation</h2>
    <p>The bees spread the nectar across the honeycomb and fan it with their wings until most of the water evaporates. When the water content falls below about eighteen percent, the bees cap each cell with wax.</p>
    <p>A single hive can produce more than twenty kilograms of surplus honey in a good season, which is what beekeepers harvest.</p>
  </article></main>
  <footer>Copyright 2026 Nature Blog Inc. All rights reserved. Privacy policy.</footer>
</body></html>`;

const xml = (s: string) => strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${s}`);

/** A two-sheet XLSX (shared strings, inline strings, numbers). */
export function simpleXlsx(): Uint8Array {
  return zipSync({
    "[Content_Types].xml": xml(`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`),
    "xl/workbook.xml": xml(
      `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Staff" sheetId="1" r:id="rId1"/><sheet name="Budget &amp; Costs" sheetId="2" r:id="rId2"/></sheets></workbook>`,
    ),
    "xl/_rels/workbook.xml.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="worksheet" Target="worksheets/sheet2.xml"/></Relationships>`,
    ),
    "xl/sharedStrings.xml": xml(
      `<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>Name</t></si><si><t>Role</t></si><si><t>Ada Lovelace</t></si><si><r><t>Chief </t></r><r><t>Analyst</t></r></si></sst>`,
    ),
    "xl/worksheets/sheet1.xml": xml(
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row></sheetData></worksheet>`,
    ),
    "xl/worksheets/sheet2.xml": xml(
      `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Item</t></is></c><c r="C1" t="inlineStr"><is><t>Cost</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Telescope</t></is></c><c r="C2"><v>1299.5</v></c></row></sheetData></worksheet>`,
    ),
  });
}

/** A two-slide PPTX with title placeholders. */
export function simplePptx(): Uint8Array {
  const slide = (title: string, body: string) =>
    xml(
      `<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><p:cSld><p:spTree>` +
        `<p:sp><p:nvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp>` +
        `<p:sp><p:nvSpPr><p:nvPr><p:ph idx="1"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>${body}</a:t></a:r></a:p></p:txBody></p:sp>` +
        `</p:spTree></p:cSld></p:sld>`,
    );
  return zipSync({
    "ppt/presentation.xml": xml(
      `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst><p:sldId id="256" r:id="rId2"/><p:sldId id="257" r:id="rId3"/></p:sldIdLst></p:presentation>`,
    ),
    "ppt/_rels/presentation.xml.rels": xml(
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="slide" Target="slides/slide1.xml"/><Relationship Id="rId3" Type="slide" Target="slides/slide2.xml"/></Relationships>`,
    ),
    "ppt/slides/slide1.xml": slide("Quarterly Results", "Revenue grew &amp; margins improved in Q3."),
    "ppt/slides/slide2.xml": slide("Roadmap", "Launch the mobile app in spring."),
  });
}
