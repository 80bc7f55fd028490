import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { tableSources } from "../../src/services/tables/extract";
import { ColumnInference, convertCell, parseDate, parseNumber } from "../../src/services/tables/infer";
import { columnNames, snakeCase, tableBaseName, uniqueName } from "../../src/services/tables/names";
import { excelSerialToIso } from "../../src/services/parsing/xlsx";
import { simpleXlsx } from "../documents/fixtures";

const infer = (values: string[]) => {
  const c = new ColumnInference();
  for (const v of values) c.observe(v);
  return c.spec("c", "C");
};

describe("type inference", () => {
  it("integer, real and text", () => {
    expect(infer(["1", "2", "-3", ""]).type).toBe("integer");
    expect(infer(["1", "2.5", "3e2"]).type).toBe("real");
    expect(infer(["$1,234.50", "€99", "1,000"]).type).toBe("real");
    expect(infer(["1,000", "2,500,000"]).type).toBe("integer");
    expect(infer(["1", "two"]).type).toBe("text");
    // Leading zeros are identifiers, not quantities.
    expect(infer(["02134", "10001"]).type).toBe("text");
    // Null-like tokens do not break a numeric column, and become NULL in it.
    const spec = infer(["10", "N/A", "NA", "-", "20"]);
    expect(spec.type).toBe("integer");
    expect(convertCell("N/A", spec)).toBeNull();
    expect(convertCell("$1,234", infer(["$1,234"]))).toBe(1234);
    // ...but stay text in a text column.
    expect(convertCell("NA", infer(["NA", "EU"]))).toBe("NA");
    // An empty column is text; empty cells are NULL.
    expect(infer(["", " "]).type).toBe("text");
    expect(convertCell("", infer(["x"]))).toBeNull();
    expect(parseNumber("9007199254740993")?.integer).toBe(false);
  });

  it("dates become ISO 8601 text, with the day/month order decided per column", () => {
    expect(infer(["2024-03-14", "2024-12-01"])).toMatchObject({ type: "text", format: "date" });
    expect(infer(["2024-03-14T09:30:00Z", "2024-03-15 10:00"])).toMatchObject({ type: "text", format: "datetime" });
    expect(parseDate("2024-03-14T09:30:00+02:00")?.iso).toBe("2024-03-14T07:30:00Z");
    const us = infer(["3/14/2024", "12/1/2024"]);
    expect(us).toMatchObject({ format: "date", dateOrder: "mdy" });
    expect(convertCell("3/14/2024", us)).toBe("2024-03-14");
    const eu = infer(["14.03.2024", "01.12.2024"]);
    expect(eu).toMatchObject({ format: "date", dateOrder: "dmy" });
    expect(convertCell("01.12.2024", eu)).toBe("2024-12-01");
    expect(convertCell("Mar 14, 2024", infer(["Mar 14, 2024"]))).toBe("2024-03-14");
    expect(convertCell("14 March 2024", infer(["14 March 2024"]))).toBe("2024-03-14");
    expect(infer(["2024-02-30"]).format).toBeUndefined(); // not a date
    expect(infer(["2024-03-14", "soon"]).format).toBeUndefined();
    expect(excelSerialToIso(45365)).toBe("2024-03-14");
    expect(excelSerialToIso(45365.5)).toBe("2024-03-14T12:00:00");
  });

  it("names: lower snake case, keywords and digits made safe, unique", () => {
    expect(snakeCase("Q3 Sales (EUR)")).toBe("q3_sales_eur");
    expect(snakeCase("unitPrice")).toBe("unit_price");
    expect(snakeCase("Café Crème")).toBe("cafe_creme");
    expect(tableBaseName("Q3 Sales.csv")).toBe("q3_sales");
    expect(tableBaseName("2024.csv")).toBe("t_2024");
    expect(tableBaseName("order.csv")).toBe("order_table");
    expect(tableBaseName("Budget.xlsx", "Costs & Items")).toBe("budget_costs_items");
    expect(columnNames(["Order", "Unit Price", "unit price", "", "2024", "_x"])).toEqual(["order_", "unit_price", "unit_price_2", "column_4", "c_2024", "x"]);
    // Names SQLite reserves get a prefix, never a refusal.
    expect(tableBaseName("sqlite_master.csv")).toBe("t_sqlite_master");
    expect(tableBaseName("SQLite Sequence.csv")).toBe("t_sqlite_sequence");
    expect(columnNames(["sqlite_rowid", "Sqlite"])).toEqual(["c_sqlite_rowid", "c_sqlite"]);
    const taken = new Set(["sales"]);
    expect(uniqueName("sales", taken)).toBe("sales_2");
    expect(uniqueName("sales", taken)).toBe("sales_3");
  });
});

describe("tables in documents", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  // Rows may be sparse (XLSX): a missing cell reads as "".
  const rows = (src: { header: string[]; rows(): Iterable<string[]> }) => [src.header, ...src.rows()].map((r) => Array.from(r, (v) => v ?? ""));

  it("CSV: one table; the delimiter is sniffed", async () => {
    const [t] = await tableSources("csv", enc('name;amount\n"Ada; Countess";3\n\nBob;4\n'));
    expect(rows(t)).toEqual([["name", "amount"], ["Ada; Countess", "3"], ["Bob", "4"]]);
    // Rows can be read again (types first, then values).
    expect([...t.rows()].length).toBe(2);
  });

  it("XLSX: one table per sheet; date-formatted cells as ISO dates", async () => {
    const sources = await tableSources("xlsx", simpleXlsx());
    expect(sources.map((s) => s.part)).toEqual(["Staff", "Budget & Costs"]);
    expect(rows(sources[1])).toEqual([["Item", "", "Cost"], ["Telescope", "", "1299.5"]]);
    const x = (s: string) => new TextEncoder().encode(`<?xml version="1.0"?>${s}`);
    const dated = zipSync({
      "xl/workbook.xml": x(`<workbook xmlns:r="r"><sheets><sheet name="Orders" sheetId="1" r:id="rId1"/></sheets></workbook>`),
      "xl/_rels/workbook.xml.rels": x(`<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`),
      "xl/styles.xml": x(`<styleSheet><numFmts count="1"><numFmt numFmtId="164" formatCode="dd/mm/yyyy"/></numFmts><cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="14"/><xf numFmtId="164"/></cellXfs></styleSheet>`),
      "xl/worksheets/sheet1.xml": x(
        `<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>When</t></is></c><c r="B1" t="inlineStr"><is><t>Also</t></is></c><c r="C1" t="inlineStr"><is><t>Qty</t></is></c></row>` +
          `<row r="2"><c r="A2" s="1"><v>45365</v></c><c r="B2" s="2"><v>45366</v></c><c r="C2" s="0"><v>45365</v></c></row></sheetData></worksheet>`,
      ),
    });
    expect(rows((await tableSources("xlsx", dated))[0])).toEqual([["When", "Also", "Qty"], ["2024-03-14", "2024-03-15", "45365"]]);
  });

  it("JSON: an array of records, or an object's arrays of records; nested objects flattened one level", async () => {
    const [arr] = await tableSources("json", enc(JSON.stringify([{ id: 1, owner: { name: "Ada" } }, { id: 2, tags: ["x"], ok: true }])));
    expect(rows(arr)).toEqual([["id", "owner.name", "tags", "ok"], ["1", "Ada", "", ""], ["2", "", '["x"]', "true"]]);
    const obj = await tableSources("json", enc(JSON.stringify({ meta: { v: 1 }, users: [{ n: "a" }], orders: [{ t: 3 }], empty: [] })));
    expect(obj.map((s) => s.part)).toEqual(["users", "orders"]);
    expect(await tableSources("json", enc('{"a": 1}'))).toEqual([]);
    expect(await tableSources("markdown", enc("# x"))).toEqual([]);
  });
});
