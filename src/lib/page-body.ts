/** One page's body for `pageSchema(key, …)`: the rows under `key` in their public form, the total and the page asked for. */
export function pageBody<K extends string, R, V>(
  key: K,
  page: { rows: R[]; total: number },
  asked: { limit: number; offset: number },
  view: (row: R) => V,
) {
  const items = { [key]: page.rows.map(view) } as { [P in K]: V[] };
  return { ...items, total: page.total, limit: asked.limit, offset: asked.offset };
}
