/** A small SVG badge as a data URI (no third-party image is loaded by the catalog). */
export function badge(letters: string, background: string, color = "#ffffff"): string {
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
    `<rect width="64" height="64" rx="14" fill="${background}"/>` +
    `<text x="32" y="41" font-family="Helvetica,Arial,sans-serif" font-size="24" font-weight="700" text-anchor="middle" fill="${color}">${letters}</text></svg>`;
  return `data:image/svg+xml;base64,${btoa(svg)}`;
}
